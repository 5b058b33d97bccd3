/**
 * A run's context for a job run in process, through its run function (gh's `runF` with an options
 * struct): stdout and stderr are in memory, the environment is empty, and the run's cleanups (its
 * client's close among them) run at finish(). Pair it with a route stub's client (route-stub.ts).
 */
import { PassThrough } from 'node:stream';
import { Command } from 'commander';
import { exitCodeOf } from '../../src/exit-codes.js';
import { addFlags, type Flag } from '../../src/options/flag.js';
import type { Connection } from '../../src/runtime/connection.js';
import type { GlobalOptions, RunContext } from '../../src/runtime/context.js';
import { depsOn, type JobDeps } from '../../src/runtime/job-deps.js';
import { Reporter } from '../../src/ui/reporter.js';
import type { RouteStub } from './route-stub.js';

export interface JobContext {
  ctx: RunContext;
  stdout(): string;
  stderr(): string;
  /** The deps of a job whose every request (paid calls included) goes to `stub`, at the fixed moment `now`. */
  depsOver(stub: RouteStub, now?: Date): JobDeps;
  /** Runs the job as main() does: its exit code, the error mapped by exitCodeOf; then the cleanups. */
  exitCodeOf(job: Promise<number>): Promise<number>;
}

/**
 * A command's flags as commander gives them to its action for `words` (defaults and negations
 * included), without running anything: what a job's run function takes.
 */
export function flagsFrom(flags: readonly Flag[], words: string[]): Record<string, unknown> {
  const command = addFlags(new Command('prospect-test').exitOverride().allowExcessArguments(false), flags);
  command.parse(words, { from: 'user' });
  return command.opts();
}

const collect = (stream: PassThrough): (() => string) => {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return () => Buffer.concat(chunks).toString('utf8');
};

/**
 * `env` is the run's whole environment: a job that keeps a ledger or reads the config file needs
 * PROSPECT_CACHE_DIR and PROSPECT_CONFIG_DIR of the test's own (scratchDir), or it would use the user's.
 */
export function jobContext(global: GlobalOptions = {}, env: NodeJS.ProcessEnv = {}): JobContext {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const cleanups: Array<() => Promise<void> | void> = [];
  const ctx: RunContext = {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stderr: stderr as unknown as NodeJS.WriteStream,
    stdin: new PassThrough() as unknown as NodeJS.ReadStream,
    env,
    global,
    signal: new AbortController().signal,
    reporter: new Reporter({ stderr, stdout, stderrIsTTY: false, verbose: true, quiet: false, debug: false }),
    onCleanup: (task) => void cleanups.push(task),
  };
  return {
    ctx,
    stdout: collect(stdout),
    stderr: collect(stderr),
    depsOver: (stub, now = new Date()) =>
      depsOn(
        ctx,
        async () => stubConnection(stub),
        { dispatcher: stub.dispatcher },
        () => now,
      ),
    async exitCodeOf(job) {
      try {
        return await job.catch((error: unknown) => exitCodeOf(error, ctx.signal));
      } finally {
        for (const cleanup of cleanups.reverse()) await cleanup();
      }
    },
  };
}

function stubConnection(stub: RouteStub): Connection {
  return {
    baseUrl: stub.baseUrl,
    apiKey: 'stub-key',
    sandbox: false,
    serviceIdentity: stub.baseUrl,
    baseUrlSource: 'PROSPECT_BASE_URL',
    proxy: { proxy: undefined, why: 'a stub transport' },
    trust: { ca: undefined, description: "Node's own" },
  };
}
