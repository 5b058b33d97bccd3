/**
 * The one sandbox helper. In-process sandboxes (real HTTP on loopback, a free port) start through
 * startTestSandbox or withSandbox; `prospect sandbox` processes through spawnSandbox. The defaults
 * are the test dataset (seed 1, 50,000 companies, cached per process) on a fixed snapshot day, so
 * dates, and therefore response bytes, do not change from one day to the next.
 */
import type { ChildProcess } from 'node:child_process';
import { buildDataset, type Dataset } from '../../src/sandbox/dataset/dataset.js';
import {
  SANDBOX_KEYS,
  startSandbox,
  todayUtc,
  type RunningSandbox,
  type SandboxOptions,
  type SandboxStats,
} from '../../src/sandbox/index.js';
import { finishCli, startCli, type CliRun } from './cli.js';

export { SANDBOX_KEYS, todayUtc };
export type { RunningSandbox, SandboxOptions, SandboxStats };
export type TestSandbox = RunningSandbox;
export { call, qs, type RawResponse } from './independent-client.js';

export const TEST_SEED = 1;

/**
 * A paid pipeline over the default test dataset: 40 US Shopify companies, their C-level and VP contacts,
 * stale addresses verified. More stale addresses than the budgets the verify-budget tests set (20 or 60
 * at most), so a budget, not the list, ends the spend.
 */
export const PAID_PIPELINE_SET: readonly string[] = [
  ...['-t', 'Shopify', '--country', 'united states', '--max', '40'],
  ...['--seniority', 'cxo,vp', '--stale', 'verify'],
];
export const TEST_AS_OF = '2025-06-30';
export const TEST_COMPANIES = 50_000;

/** The options of `prospect sandbox --as-of DAY`: contacts dated from DAY, companies of DAY's month's crawl. */
export function asOfDay(day: string): Pick<SandboxOptions, 'asOf' | 'crawl'> {
  return { asOf: day, crawl: day.slice(0, 7) };
}

/**
 * A sandbox in this process; options override the test defaults (pass `asOf: todayUtc()` for a sandbox of
 * today). It serves the reference crawl unless given `crawl: 'YYYY-MM'`, as `prospect sandbox --as-of` does.
 */
export async function startTestSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  return startSandbox({
    host: '127.0.0.1',
    port: 0,
    seed: TEST_SEED,
    asOf: TEST_AS_OF,
    companies: TEST_COMPANIES,
    ...options,
  });
}

/** A sandbox for the length of `body`, closed whatever happens. */
export async function withSandbox<T>(
  options: SandboxOptions,
  body: (sandbox: RunningSandbox) => Promise<T>,
): Promise<T> {
  const sandbox = await startTestSandbox(options);
  try {
    return await body(sandbox);
  } finally {
    await sandbox.close();
  }
}

/** The dataset a test sandbox serves, for computing expected answers without HTTP. */
export function testDataset(options: { companies?: number; seed?: number; crawl?: string } = {}): Dataset {
  return buildDataset({
    companies: options.companies ?? TEST_COMPANIES,
    seed: options.seed ?? TEST_SEED,
    crawl: options.crawl,
  });
}

export interface SandboxProcess {
  child: ChildProcess;
  /** The first line of stdout: the address, once listening. Rejects if the process ends first. */
  url: Promise<string>;
  /** stderr so far. */
  stderr(): string;
  /** Resolves when the process has ended and its output is drained. */
  finished: Promise<CliRun>;
  /** Sends the signal and waits for the end. */
  stop(signal?: NodeJS.Signals): Promise<CliRun>;
}

/**
 * `prospect sandbox ARGS` as a user starts it: the built binary, a process of its own, killed after
 * `timeoutMs` (default 60 s) if still running.
 */
export function spawnSandbox(args: string[], options: { timeoutMs?: number } = {}): SandboxProcess {
  const child = startCli(['sandbox', ...args]);
  child.stdin!.end();
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const finished = finishCli(child, { timeoutMs: options.timeoutMs });
  const url = new Promise<string>((resolveUrl, reject) => {
    const firstLine = () => {
      const end = stdout.indexOf('\n');
      if (end >= 0) resolveUrl(stdout.slice(0, end));
    };
    child.stdout!.on('data', firstLine);
    void finished.then(
      (run) =>
        reject(
          new Error(
            `prospect sandbox ended (exit ${run.code}, signal ${run.signal}) before printing its address; stderr: ${run.stderr}`,
          ),
        ),
      reject,
    );
  });
  url.catch(() => {}); // a caller that only waits for `finished` (a refused flag) must not see an unhandled rejection
  return {
    child,
    url,
    stderr: () => stderr,
    finished,
    stop: (signal = 'SIGTERM') => {
      child.kill(signal);
      return finished;
    },
  };
}
