/**
 * Runs once per `vitest run`, before any test file:
 * - builds dist/ when it is missing or older than what it is built from, so `npm test` after an edit
 *   tests the edit, and CI (where `npm ci` already built through `prepare`) does not build twice;
 * - makes the run's scratch root, and removes it when the run ends.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { IN_CI, missingPrograms } from './programs.js';
import { stopCluster } from './postgres.js';
import { removeTree } from './scratch.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** What `npm run build` reads. */
const BUILD_INPUTS = ['src', 'fixtures', 'scripts', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];
/** What it writes: the bundled CLI the spawned tests run, the library the package name resolves to, and packages/client. */
const BUILD_OUTPUTS = ['dist/cli/cli.js', 'dist/index.js', 'packages/client/dist/index.js'];

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = info.mtimeMs; // a deleted file changes its directory
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

export function buildIsStale(): string | undefined {
  const outputs = BUILD_OUTPUTS.map((path) => join(ROOT, path));
  const missing = outputs.find((path) => !existsSync(path));
  if (missing) return `${missing} is missing`;
  const built = Math.min(...outputs.map((path) => statSync(path).mtimeMs));
  const changed = BUILD_INPUTS.find((input) => newestMtime(join(ROOT, input)) > built);
  return changed === undefined ? undefined : `${changed} changed since the last build`;
}

let scratchRoot: string | undefined;

export function setup(project: TestProject): void {
  // In CI a test never skips for a missing program, and never meets one: the run stops here instead.
  const missing = IN_CI ? missingPrograms() : [];
  if (missing.length > 0)
    throw new Error(`CI needs programs that are missing (.ci/run installs them):\n${missing.join('\n')}`);
  const stale = buildIsStale();
  if (stale) {
    process.stderr.write(`test setup: building dist/ (${stale})\n`);
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  }
  scratchRoot = mkdtempSync(join(tmpdir(), 'prospect-tests-'));
  project.provide('scratchRoot', scratchRoot);
}

export async function teardown(): Promise<void> {
  // The PostgreSQL cluster a state-store test started (test/helpers/postgres.ts), if any.
  if (scratchRoot) stopCluster(scratchRoot);
  if (scratchRoot) await removeTree(scratchRoot);
}
