/**
 * The one helper that runs prospect: every test that runs it as a user does goes through startCli
 * (the built binary, a clean environment, no config, key leak checks), runCli or runShell; the
 * matrices of checks behind one spawned case go through runInProcess (the same main() of the same
 * build, in a worker thread of the test process, without a process's start-up cost).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { expect } from 'vitest';
import { scratchDir, scratchRoot } from './scratch.js';

export { scratchDir };

export const BIN = resolve(import.meta.dirname, '../../bin/prospect.js');
/**
 * Node's flags for a spawned prospect. --liftoff-only: V8 compiles undici's HTTP parser (WebAssembly)
 * with its baseline compiler alone, not again in the background with its optimizing one. It changes
 * no behaviour and saves about 0.04-0.08 s of CPU in each of the suite's ~250 processes (test/README.md).
 */
export const NODE_FLAGS = ['--liftoff-only'];
/** The built binary as a shell line runs it (`$PROSPECT` in runShell, a `prospect` shim on a PATH). */
export const PROSPECT_COMMAND = [process.execPath, ...NODE_FLAGS, BIN].map((word) => `"${word}"`).join(' ');
/** What bin/prospect.js imports and runs: the bundled CLI that `npm run build` writes. */
const BUNDLE = resolve(import.meta.dirname, '../../dist/cli/cli.js');

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Service address; sets PROSPECT_BASE_URL. */
  url?: string;
  /** The key to use; sets PROSPECT_API_KEY and is checked for leaks after the run. */
  apiKey?: string;
  input?: string | Buffer;
  cwd?: string;
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
  /** Extra files or directories to scan for the key after the run (output files, state dirs, summaries). */
  scan?: string[];
  /** false: `cwd` is not scanned for the key (the caller scans what the run wrote); default true. */
  scanCwd?: boolean;
  /** Runs the binary under another program (for example faketime): gets node's argv, returns what to spawn. */
  wrap?: (args: string[]) => { command: string; args: string[] };
}

/**
 * The user's environment minus anything of prospect's, plus a config and a cache directory of this
 * run alone (those two never created unless written): no test reads the user's files or another test's.
 */
function childEnv(options: CliOptions): NodeJS.ProcessEnv {
  // Made by mkdtemp, not named by a count in this module: a file's vi.resetModules() restarts such a
  // count for the files after it in the worker, and two runs would share a config directory.
  const own = mkdtempSync(join(scratchRoot(), 'run-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_COLOR: '1',
    PROSPECT_CONFIG_DIR: join(own, 'config'),
    PROSPECT_CACHE_DIR: join(own, 'cache'),
    // One dataset cache for the whole run: a --sandbox run reads the dataset an earlier one drew.
    PROSPECT_SANDBOX_CACHE_DIR: join(scratchRoot(), 'sandbox-datasets'),
  };
  delete env.PROSPECT_API_KEY;
  delete env.PROSPECT_BASE_URL;
  delete env.PROSPECT_DEBUG;
  delete env.PROSPECT_STATE_URL;
  delete env.PROSPECT_TEAM_KEY;
  // No test speaks TLS, and Node reads the CA bundle this names at every start: about 50 ms of CPU
  // for each of the suite's 400-odd processes on machines that set it.
  delete env.NODE_EXTRA_CA_CERTS;
  // Nor a proxy or a CA list of the machine's: the tests that want one set it.
  for (const name of [
    'HTTPS_PROXY',
    'https_proxy',
    'HTTP_PROXY',
    'http_proxy',
    'ALL_PROXY',
    'all_proxy',
    'NO_PROXY',
    'no_proxy',
    'SSL_CERT_FILE',
    'PROSPECT_CA_FILE',
  ])
    delete env[name];
  if (options.apiKey !== undefined) env.PROSPECT_API_KEY = options.apiKey;
  if (options.url !== undefined) env.PROSPECT_BASE_URL = options.url;
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** Starts the built binary as a user would; the caller owns the child (signals, streaming). */
export function startCli(args: string[], options: CliOptions = {}): ChildProcess {
  const spawned = options.wrap
    ? options.wrap([BIN, ...args])
    : { command: process.execPath, args: [...NODE_FLAGS, BIN, ...args] };
  return track(
    spawn(spawned.command, spawned.args, {
      cwd: options.cwd ?? process.cwd(),
      env: childEnv(options),
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
}

const running = new Set<ChildProcess>();

/** When a child is over: 'close' (its output drained), or 'exit' for one with an IPC channel, which never closes. */
const endOf = (child: ChildProcess) => (typeof child.send === 'function' ? 'exit' : 'close');

function track(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once(endOf(child), () => running.delete(child));
  return child;
}

/** Kills what a failed test left running (a sandbox, a stopped run), so no file leaves a process behind. */
export async function stopStrayChildren(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((resolveClosed) => {
          child.once(endOf(child), () => resolveClosed());
          const kill = () => {
            child.kill('SIGCONT');
            child.kill('SIGKILL');
          };
          if (!child.connected) return kill();
          // A host of inProcessUnder ends when its channel closes, and its wrapper with it. Killed,
          // faketime would leave its shared memory (/dev/shm/faketime_shm_PID) behind, and a later
          // faketime given the same pid fails to start.
          child.disconnect();
          setTimeout(kill, 5000).unref();
        }),
    ),
  );
}

/** Collects a started child's output and exit, then checks that the key leaked nowhere. */
export async function finishCli(child: ChildProcess, options: CliOptions = {}): Promise<CliRun> {
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
  const timeoutMs = options.timeoutMs ?? 60_000;
  const result = await new Promise<CliRun>((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`prospect did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({
        code,
        signal,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      });
    });
  });
  await assertNoKeyLeak(result, options);
  return result;
}

/** Runs the built binary to completion with the given stdin. Every spawned-binary test goes through here. */
export async function runCli(args: string[], options: CliOptions = {}): Promise<CliRun> {
  const child = startCli(args, options);
  child.stdin!.on('error', () => {});
  child.stdin!.end(options.input ?? '');
  return finishCli(child, options);
}

/** The secret must appear in no output: stdout, stderr, files written, state and debug logs. */
async function assertNoKeyLeak(run: CliRun, options: CliOptions): Promise<void> {
  const key = options.apiKey;
  if (key === undefined || key === '') return;
  expect(run.stdout.includes(key), 'API key leaked to stdout').toBe(false);
  expect(run.stderr.includes(key), 'API key leaked to stderr').toBe(false);
  const cwd = options.cwd !== undefined && options.scanCwd !== false ? [options.cwd] : [];
  for (const path of [...(options.scan ?? []), ...cwd]) {
    for (const file of await filesUnder(path)) {
      const content = await readFile(file, 'utf8').catch(() => '');
      expect(content.includes(key), `API key leaked to ${file}`).toBe(false);
    }
  }
}

async function filesUnder(path: string): Promise<string[]> {
  const info = await stat(path).catch(() => undefined);
  if (!info) return [];
  if (info.isFile()) return [path];
  if (!info.isDirectory()) return [];
  const entries = await readdir(path, { withFileTypes: true });
  const nested = await Promise.all(entries.map((entry) => filesUnder(join(path, entry.name))));
  return nested.flat();
}

/**
 * Runs a shell pipeline (`prospect … | head -1`) asynchronously: a test's in-process sandbox must
 * keep answering while it runs. `$PROSPECT` in the script is the built binary.
 */
export async function runShell(script: string, options: CliOptions = {}): Promise<CliRun> {
  const child = track(
    spawn('bash', ['-c', `set -o pipefail; ${script}`], {
      cwd: options.cwd ?? process.cwd(),
      env: {
        ...childEnv(options),
        PROSPECT: PROSPECT_COMMAND,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  // A script that never reads its stdin may have exited before it is closed.
  child.stdin!.on('error', () => {});
  child.stdin!.end(options.input ?? '');
  return finishCli(child, options);
}

/**
 * What runInProcess takes: no wrapper and no signals. `cwd` is the test process's own working
 * directory for the length of the run (a thread has none of its own, and runs are one at a time).
 */
export type InProcessOptions = Omit<CliOptions, 'wrap'> & {
  /**
   * stdout and stderr say they are a terminal of this size (isTTY, columns, rows), for what is drawn
   * to a width (help, tables, summaries). Nothing else of a terminal: set TERM=dumb for no progress line.
   */
  terminal?: { columns: number; rows: number };
};

/** A worker thread and the queue of runs it takes one at a time. */
interface Slot {
  worker?: Worker;
  queue: Promise<unknown>;
  /** Runs queued or running. */
  pending: number;
}

const slots = new Set<Slot>();
const newSlot = (): Slot => {
  const slot: Slot = { queue: Promise.resolve(), pending: 0 };
  slots.add(slot);
  return slot;
};
const ownSlot = newSlot();

/**
 * Runs `prospect ARGS` in this process: main() of the built bundle, the function bin/prospect.js
 * runs, in a worker thread whose stdin, stdout, stderr and environment are this run's own (see
 * cli-worker.mjs), with the environment runCli gives a process and the same key leak checks. It
 * costs milliseconds where a process costs a start-up, so a table of cases (every bad flag value)
 * runs here while one case of it is spawned, to show the binary behaves the same.
 *
 * Not for what only a process shows: exit through a signal, a terminal, the start-up itself. With
 * `cwd`, the test process changes to that directory for the run and back after it (the thread
 * shares the process's working directory): relative paths resolve there, as in a spawned run, and
 * nothing else in the test process may rely on the working directory meanwhile (the helpers use
 * absolute paths). Runs are queued, one at a time; the worker is reused by the runs of the test
 * files of one test process (stopInProcessCli).
 */
export function runInProcess(args: string[], options: InProcessOptions = {}): Promise<CliRun> {
  return runInSlot(ownSlot, args, options);
}

/** What inProcessCommand gives: a directory to put first on a shell's PATH, and its end. */
export interface InProcessCommand {
  /** Holds `prospect` (and the socket it reaches this process by). */
  bin: string;
  close(): Promise<void>;
}

/**
 * A `prospect` command for shell lines whose prospect need not be a process of its own: each time the
 * shell runs it, its argv, environment, working directory and stdin go over a Unix socket to this
 * process, which runs them with runInProcess (same key leak checks on stdout and stderr, `cwd` not
 * scanned: the caller scans what the line wrote), and the command writes the run's stdout and
 * stderr and exits with its code (test/helpers/cli-relay.mjs). So the shell parses the line as
 * written (pipes, redirects, `$(…)`, `cd … &&`) and each prospect in it costs a bare node start,
 * not a prospect start-up. Not for what only a process shows, nor for a command that never ends (a
 * sandbox), nor for input that must stream: stdin is read to its end before the run starts.
 */
export async function inProcessCommand(
  options: Pick<CliOptions, 'apiKey' | 'timeoutMs'> = {},
): Promise<InProcessCommand> {
  const bin = await scratchDir('prospect-relay-');
  const socketPath = join(bin, 'relay.sock');
  const relay = async (socket: Socket, request: string) => {
    const { args, env, cwd, input } = JSON.parse(request) as {
      args: string[];
      env: Record<string, string>;
      cwd: string;
      input: string;
    };
    const run = await runInProcess(args, {
      ...options,
      env,
      cwd,
      scanCwd: false,
      input: Buffer.from(input, 'base64'),
    }).then(
      (done) => ({
        code: done.code,
        stdout: Buffer.from(done.stdout).toString('base64'),
        stderr: Buffer.from(done.stderr).toString('base64'),
      }),
      (error: unknown) => ({ error: String(error) }),
    );
    socket.end(JSON.stringify(run));
  };
  // Half open: the command ends its side once its request is sent, and waits for the answer.
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => void relay(socket, Buffer.concat(chunks).toString('utf8')));
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((listening) => server.listen(socketPath, listening));
  const command = join(bin, 'prospect');
  const script = resolve(import.meta.dirname, 'cli-relay.mjs');
  await writeFile(command, `#!/bin/sh\nexec "${process.execPath}" "${script}" "${socketPath}" "$@"\n`);
  await chmod(command, 0o755);
  return { bin, close: () => new Promise((closed) => server.close(() => closed())) };
}

/**
 * runInProcess on up to `size` workers at once, for a file whose runs mostly wait (on backoff, on a
 * slow service) and would take the sum of their waits one after another. Each worker loads the
 * bundle once, about what a process start costs, so a pool of N costs N of those, not one a run. No
 * `cwd`: the working directory is the process's, shared by every thread.
 */
export function inProcessPool(
  size: number,
): (args: string[], options?: Omit<InProcessOptions, 'cwd'>) => Promise<CliRun> {
  const pool = Array.from({ length: size }, newSlot);
  return (args, options = {}) => {
    if ('cwd' in options) throw new Error('inProcessPool runs share the working directory: use absolute paths');
    const idlest = pool.reduce((best, slot) => (slot.pending < best.pending ? slot : best));
    return runInSlot(idlest, args, options);
  };
}

function runInSlot(slot: Slot, args: string[], options: InProcessOptions): Promise<CliRun> {
  slot.pending += 1;
  const run = slot.queue.then(() => runInWorker(slot, args, options));
  slot.queue = run.catch(() => {});
  return run
    .finally(() => (slot.pending -= 1))
    .then(async (result) => {
      await assertNoKeyLeak(result, options);
      return result;
    });
}

/** A worker that does not keep the test process alive: one kept between files must not hold it at the end. */
function startWorker(): Worker {
  const worker = new Worker(new URL('./cli-worker.mjs', import.meta.url), {
    workerData: { bundle: pathToFileURL(BUNDLE).href },
    execArgv: [],
    stdout: false,
    stderr: false,
  });
  worker.unref();
  return worker;
}

function runInWorker(slot: Slot, args: string[], options: InProcessOptions): Promise<CliRun> {
  const thread = (slot.worker ??= startWorker());
  const timeoutMs = options.timeoutMs ?? 60_000;
  const home = process.cwd();
  return new Promise<CliRun>((resolveRun, reject) => {
    const stopWith = (error: Error) => {
      done();
      void stopSlot(slot);
      reject(error);
    };
    const timer = setTimeout(
      () => stopWith(new Error(`prospect (in process) did not finish within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onMessage = (message: { code: number; stdout: Uint8Array; stderr: Uint8Array } | { thrown: string }) => {
      done();
      if ('thrown' in message) reject(new Error(`main() threw: ${message.thrown}`));
      else
        resolveRun({
          code: message.code,
          signal: null,
          stdout: Buffer.from(message.stdout).toString('utf8'),
          stderr: Buffer.from(message.stderr).toString('utf8'),
        });
    };
    // process.exit() in the CLI ends the thread: a spawned run would have exited the same way, but its output is lost here.
    const onExit = (code: number) =>
      stopWith(new Error(`prospect (in process) called process.exit(${code}); run it with runCli`));
    const onError = (error: Error) => stopWith(error);
    const done = () => {
      if (options.cwd !== undefined) process.chdir(home);
      clearTimeout(timer);
      thread.off('message', onMessage).off('exit', onExit).off('error', onError);
    };
    thread.on('message', onMessage).on('exit', onExit).on('error', onError);
    // Vitest runs this file in a forked process (vitest.config.ts, pool 'forks'), where chdir is allowed.
    if (options.cwd !== undefined) process.chdir(options.cwd);
    thread.postMessage({
      argv: [process.execPath, BIN, ...args],
      env: childEnv(options),
      input: Buffer.from(options.input ?? ''),
      terminal: options.terminal,
      cwd: process.cwd(),
    });
  });
}

/**
 * The file is over: its pools' workers end, and so does a worker with a run still going (a test that
 * timed out). The idle worker of runInProcess stays for the next file of this test process, which
 * would otherwise load the bundle again (about 0.25 s of CPU). A run carries all a spawned process
 * starts with: argv, environment, stdio and working directory are each run's own (cli-worker.mjs).
 */
export async function stopInProcessCli(): Promise<void> {
  const ending = [...slots].filter((slot) => slot !== ownSlot || slot.pending > 0);
  for (const slot of ending) if (slot !== ownSlot) slots.delete(slot);
  await Promise.all(ending.map(stopSlot));
}

/** Ends one worker (the file is over, or a run went wrong); its next run starts a new one. */
async function stopSlot(slot: Slot): Promise<void> {
  const thread = slot.worker;
  slot.worker = undefined;
  await thread?.terminate();
}

/**
 * runInProcess in a process of its own, started once under `wrap` (a program the runs need around
 * their process: faketime for the golden outputs): the worker of runInProcess (cli-worker.mjs) in a
 * host process (cli-host.mjs), so N runs under faketime cost one process start, not N. The runs get
 * the environment and the key leak checks of runInProcess; the host is stopped when the file ends.
 */
export function inProcessUnder(
  wrap: NonNullable<CliOptions['wrap']>,
): (args: string[], options?: Omit<InProcessOptions, 'cwd'>) => Promise<CliRun> {
  let host: ChildProcess | undefined;
  let hostQueue: Promise<unknown> = Promise.resolve();
  const start = () => {
    const spawned = wrap([resolve(import.meta.dirname, 'cli-host.mjs'), pathToFileURL(BUNDLE).href]);
    return track(
      spawn(spawned.command, spawned.args, {
        env: childEnv({}),
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        serialization: 'advanced',
      }),
    );
  };
  const runInHost = (args: string[], options: Omit<InProcessOptions, 'cwd'>) =>
    new Promise<CliRun>((resolveRun, reject) => {
      const child = (host ??= start());
      const timeoutMs = options.timeoutMs ?? 60_000;
      const stopWith = (error: Error) => {
        done();
        host = undefined;
        child.kill('SIGKILL');
        reject(error);
      };
      const timer = setTimeout(
        () => stopWith(new Error(`prospect (in a host process) did not finish within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const onMessage = (message: unknown) => {
        const answer = message as { code: number; stdout: Uint8Array; stderr: Uint8Array } | { thrown: string };
        done();
        if ('thrown' in answer) reject(new Error(`main() threw: ${answer.thrown}`));
        else
          resolveRun({
            code: answer.code,
            signal: null,
            stdout: Buffer.from(answer.stdout).toString('utf8'),
            stderr: Buffer.from(answer.stderr).toString('utf8'),
          });
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
        stopWith(new Error(`the host process ended (exit ${code}, signal ${signal})`));
      const onError = (error: Error) => stopWith(error);
      const done = () => {
        clearTimeout(timer);
        child.off('message', onMessage).off('exit', onExit).off('error', onError);
      };
      child.on('message', onMessage).on('exit', onExit).on('error', onError);
      child.send({
        argv: [process.execPath, BIN, ...args],
        env: childEnv(options),
        input: Buffer.from(options.input ?? ''),
      });
    });
  return (args, options = {}) => {
    const run = hostQueue.then(() => runInHost(args, options));
    hostQueue = run.catch(() => {});
    return run.then(async (result) => {
      await assertNoKeyLeak(result, options);
      return result;
    });
  };
}
