/**
 * A process of its own for runInProcess's worker (cli-worker.mjs), for runs that need a program
 * around their process, as faketime (test/helpers/cli.ts, inProcessUnder): the parent starts it once
 * under that program and sends it runs over IPC, one at a time, as runInProcess sends them to its
 * thread. argv[2] is the bundle to load.
 */
import { Worker } from 'node:worker_threads';

const worker = new Worker(new URL('./cli-worker.mjs', import.meta.url), {
  workerData: { bundle: process.argv[2] },
  execArgv: [],
  stdout: false,
  stderr: false,
});
// This process never changes directory: each run's is its own.
process.on('message', (run) => worker.postMessage({ ...run, cwd: process.cwd() }));
worker.on('message', (result) => process.send(result));
worker.on('error', (error) => process.send({ thrown: String(error?.stack ?? error) }));
// process.exit() in the CLI ends the thread: say so, as runInProcess does, and end with it.
worker.on('exit', (code) =>
  process.send({ thrown: `prospect (in process) called process.exit(${code})` }, () => process.exit(1)),
);
process.on('disconnect', () => process.exit(0));
