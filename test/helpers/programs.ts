/**
 * Real programs some tests run, from the one list in programs.json that .ci/run also reads. On a
 * developer's machine a missing one skips its tests with a printed reason; in CI (`CI=true`) the
 * global setup stops the run at once with one line per missing program (`missingInCi`), so a test
 * never meets an absent program.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export const IN_CI = /^(1|true|yes)$/i.test(process.env.CI ?? '');

interface ProgramEntry {
  name: string;
  commands: string[];
  probe: string[];
  package: string;
  for: string;
}

const LIST = JSON.parse(readFileSync(new URL('./programs.json', import.meta.url), 'utf8')) as {
  programs: ProgramEntry[];
};

export type ProgramName =
  | 'script'
  | 'faketime'
  | 'python3'
  | 'soffice'
  | 'zsh'
  | 'fish'
  | 'chromium'
  | 'strace'
  | 'time'
  | 'setpriv'
  | 'openssl'
  | 'nginx'
  | 'squid'
  | 'postgres'
  | 'pgbouncer';

export interface Program {
  readonly name: ProgramName;
  /** What to install, for messages. */
  readonly install: string;
  /** Whether the tests that need it are skipped: only when it is missing off CI. */
  readonly skip: boolean;
  /** The command that passed the probe; throws a one-line reason when none did. */
  readonly command: string;
}

function entryOf(name: string): ProgramEntry {
  const entry = LIST.programs.find((program) => program.name === name);
  if (!entry) throw new Error(`${name} is not listed in test/helpers/programs.json`);
  return entry;
}

function probe(entry: ProgramEntry): string | undefined {
  return entry.commands.find(
    (command) => spawnSync(command, entry.probe, { stdio: 'ignore', timeout: 60_000 }).status === 0,
  );
}

function missingLine(entry: ProgramEntry): string {
  return `${entry.name} (${entry.for}) is not installed or fails its probe \`${entry.commands[0]} ${entry.probe.join(' ')}\`: apt-get install ${entry.package}`;
}

const found = new Map<string, string | undefined>();

/** The program, probed once per process. */
export function findProgram(name: ProgramName): Program {
  const entry = entryOf(name);
  if (!found.has(name)) found.set(name, probe(entry));
  const command = found.get(name);
  const skip = command === undefined && !IN_CI;
  if (skip) console.log(`skipping the tests that need ${missingLine(entry)} (in CI a missing program fails).`);
  return {
    name,
    install: `apt-get install ${entry.package}`,
    skip,
    get command() {
      if (command === undefined) throw new Error(missingLine(entry));
      return command;
    },
  };
}

/** One line for each listed program that fails its probe here. */
export function missingPrograms(): string[] {
  return LIST.programs.filter((entry) => probe(entry) === undefined).map(missingLine);
}
