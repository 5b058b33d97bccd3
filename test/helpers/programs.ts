/**
 * Real programs some tests need (LibreOffice, zsh, fish, faketime). On a developer's machine a
 * missing one skips its tests with a printed reason; in CI (`CI=true`, where .ci/run installs them)
 * a missing one fails: a promise checked only where the checker happens to be installed is not guarded.
 */
import { spawnSync } from 'node:child_process';

export const IN_CI = /^(1|true|yes)$/i.test(process.env.CI ?? '');

export interface Program {
  /** The command that answered, undefined when none is installed. */
  command: string | undefined;
  /** Whether the tests that need it are skipped: only when it is missing off CI. */
  skip: boolean;
  /** What to install, for the failure message. */
  install: string;
}

/** The first of `candidates` that runs `probeArgs` with exit 0. */
export function findProgram(candidates: string[], probeArgs: string[], install: string): Program {
  const command = candidates.find((name) => spawnSync(name, probeArgs, { stdio: 'ignore', timeout: 60_000 }).status === 0);
  const skip = command === undefined && !IN_CI;
  if (skip) console.log(`skipping the tests that need ${candidates[0]}: it is not installed here (\`${install}\` to run them; in CI a missing program fails).`);
  return { command, skip, install };
}
