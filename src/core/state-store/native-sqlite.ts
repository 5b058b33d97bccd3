/**
 * better-sqlite3, the one native module prospect loads (the --state exports ledger). An install
 * without its build step (`npm install --ignore-scripts`, a copy from another Node.js version) has
 * the JavaScript but no binary that loads: that is a broken install, said in one line with the
 * repair, and found before a run starts (checkNativeSqlite), not deep in it as an internal error.
 */
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { CliError, ExitCode } from '../../exit-codes.js';

type DatabaseConstructor = typeof BetterSqlite3;

let loaded: Promise<DatabaseConstructor> | undefined;

/**
 * The Database class, once its native binary has opened a database; a CliError (exit 1) that says
 * how to repair it otherwise.
 */
export function loadSqlite(): Promise<DatabaseConstructor> {
  loaded ??= probe();
  return loaded;
}

/** Called before a run that needs --state does anything: a broken install stops it there. */
export async function checkNativeSqlite(): Promise<void> {
  await loadSqlite();
}

async function probe(): Promise<DatabaseConstructor> {
  try {
    const { default: Database } = await import('better-sqlite3');
    new Database(':memory:').close();
    return Database;
  } catch (error) {
    throw brokenInstall(error);
  }
}

function brokenInstall(error: unknown): CliError {
  // The first sentence: "Could not locate the bindings file", "... was compiled against a different
  // Node.js version ...".
  const reason = (error instanceof Error ? error.message : String(error))
    .split(/\.\s|\n/)[0]!
    .trim()
    .replace(/[.:]$/, '');
  return new CliError(
    'the native module better-sqlite3, which --state needs, does not load ' +
      `(${reason.length > 120 ? `${reason.slice(0, 117)}...` : reason}); nothing was sent.`,
    ExitCode.internal,
    `Repair the install: cd ${installFolder()} && npm rebuild better-sqlite3 ` +
      '(an install with --ignore-scripts skips its build).',
  );
}

/** The folder whose node_modules holds better-sqlite3: where `npm rebuild` must run. */
function installFolder(): string {
  try {
    const manifest = createRequire(import.meta.url).resolve('better-sqlite3/package.json');
    return resolve(dirname(manifest), '..', '..');
  } catch {
    return "prospect's install folder";
  }
}
