import { rmSync } from 'node:fs';
import { exitCodeOf } from '../exit-codes.js';
import { aJobHandlesBrokenPipe } from '../io/broken-pipe.js';
import { removeOpenTempFilesSync } from '../io/temp-files.js';
import { Reporter } from '../ui/reporter.js';
import type { GLOBAL_FLAGS } from '../options/command-flags.js';
import type { FlagValues } from '../options/flag.js';

/** The program's own flags (src/options/flags.ts), as commander gives them. */
export type GlobalOptions = Partial<FlagValues<typeof GLOBAL_FLAGS>>;

/** Everything a command needs from the outside world, so commands never reach for globals. */
export interface RunContext {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  env: NodeJS.ProcessEnv;
  reporter: Reporter;
  global: GlobalOptions;
  /** Aborted on SIGINT/SIGTERM; `signal.reason` is the signal name. */
  signal: AbortSignal;
  /** Runs at the end of the command, success or not (close pools, stop the in-process sandbox). */
  onCleanup(task: () => Promise<void> | void): void;
  /**
   * Set by a run that failed after writing rows straight to stdout (or a device): they cannot be
   * taken back, so its last stderr line says the output is incomplete (src/cli.ts).
   */
  incompleteOutput?: { rows: number; noun: string; where: string };
  /**
   * Set by a run that may pay: what it spent so far and where the results are kept, the last line of
   * a run that fails or is stopped (src/cli.ts); undefined while nothing was spent.
   */
  spentSoFar?: () => string | undefined;
  /** Where the run's API key came from, once the connection is resolved: a refused key's hint depends on it. */
  keySource?: 'environment' | 'config' | 'sandbox';
}

export function createContext(
  global: GlobalOptions,
  signal: AbortSignal,
  cleanups: Array<() => Promise<void> | void>,
): RunContext {
  const env = process.env;
  const debug = Boolean(global.debug) || env.PROSPECT_DEBUG === '1';
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env,
    global: { ...global, debug },
    signal,
    reporter: new Reporter({
      stderr: process.stderr,
      stdout: process.stdout,
      stderrIsTTY: Boolean(process.stderr.isTTY),
      verbose: Boolean(global.verbose),
      quiet: Boolean(global.quiet),
      debug,
    }),
    onCleanup(task) {
      cleanups.push(task);
    },
  };
}

/**
 * SIGINT/SIGTERM abort the run so it can keep its checkpoint, remove its temp files and say what it
 * left. A repeated SIGTERM changes nothing: supervisors send it more than once (GNU `timeout` signals
 * the command and then its process group) and escalate with SIGKILL. A second SIGINT is a person who
 * will not wait: temp files are removed synchronously and the process exits at once, saying so.
 */
export function installSignalHandlers(controller: AbortController): () => void {
  const handle = (signal: NodeJS.Signals) => {
    if (!controller.signal.aborted) return controller.abort(signal);
    if (signal !== 'SIGINT') return;
    removeOpenTempFilesSync((path) => rmSync(path, { force: true }));
    process.stderr.write('prospect: interrupted by SIGINT again; stopped at once, before the run could finish.\n');
    process.exit(exitCodeOf(undefined, AbortSignal.abort(signal)));
  };
  process.on('SIGINT', handle);
  process.on('SIGTERM', handle);
  return () => {
    process.off('SIGINT', handle);
    process.off('SIGTERM', handle);
  };
}

/**
 * `| head -1` closes our stdout: that is the reader saying "enough", not an error. A job under way
 * ends itself with exit 0 and its --summary (src/io/broken-pipe.ts); otherwise the process exits 0 here.
 */
export function exitQuietlyOnBrokenPipe(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') {
      if (aJobHandlesBrokenPipe()) return;
      removeOpenTempFilesSync((path) => rmSync(path, { force: true }));
      process.exit(0);
    }
    throw error;
  });
}
