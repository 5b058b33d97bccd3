/**
 * The worker thread behind runInProcess (test/helpers/cli.ts). It imports the built CLI bundle and
 * runs its main(argv), the function bin/prospect.js runs, once per message. For each run this
 * thread's process.stdin, process.stdout, process.stderr, process.env and process.cwd() are replaced by the run's
 * own (the CLI reads them when a run starts: src/runtime/context.ts, commander's output), so a run
 * sees what a spawned process with piped stdio and that environment sees. The parent sends one run
 * at a time.
 */
import { Readable, Writable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';

const { main } = await import(workerData.bundle);

/** A pipe-like stream that keeps what is written (no isTTY, no columns: what a spawned run's pipe looks like). */
function collector(chunks) {
  return new Writable({
    write(chunk, encoding, done) {
      chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, encoding));
      done();
    },
  });
}

function replace(name, value) {
  Object.defineProperty(process, name, { value, configurable: true, enumerable: true, writable: true });
}

parentPort.on('message', async ({ argv, env, input, terminal, cwd }) => {
  const stdout = [];
  const stderr = [];
  // runInProcess's `terminal`: both streams say they are a terminal of that size.
  const screen = terminal ? { isTTY: true, columns: terminal.columns, rows: terminal.rows } : {};
  replace('stdout', Object.assign(collector(stdout), screen));
  replace('stderr', Object.assign(collector(stderr), screen));
  replace('stdin', Readable.from(input.length > 0 ? [Buffer.from(input)] : []));
  process.env = env;
  // The directory the parent changed to for this run. A thread's own process.cwd() is a copy Node
  // refreshes when the parent calls chdir, but it counts the change before making it: read in between,
  // the copy keeps the old directory (lib/internal/worker.js), so path.resolve would use a stale one.
  replace('cwd', () => cwd);
  let code;
  try {
    code = await main(argv);
  } catch (error) {
    // main() never throws (src/cli.ts): if it does, the test fails on this, not on a made-up exit code.
    parentPort.postMessage({ thrown: String(error?.stack ?? error) });
    return;
  }
  // Writes a stream finished in the same turn as main() resolved land before the run is reported.
  await nextTurn();
  parentPort.postMessage({ code, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr) });
});
