/**
 * The data commands against a sandbox that fails on purpose (issue 7, "proof against a hostile world"):
 * - at 30% faults of every kind (plus latency spikes) the output is byte-identical to a fault-free run
 *   against a sandbox with the same seed;
 * - in a total outage each command ends within its retry budget, with exit 5, one line on stderr, and
 *   no output file (an old one is left as it was): the budget is counted, not timed: the sandbox counts
 *   exactly --max-retries + 1 attempts (and one more for each 429, which uses up no retry), and an
 *   attempt that ignored its --timeout would hang on the silent kinds past the test's timeout. The
 *   times are logged beside the budget (retryBudgetMs), for a reader, never asserted;
 * - a pipeline with --state that meets an outage mid-run resumes, once a healthy sandbox with the same
 *   seed answers on another port, to output byte-identical to a clean run.
 *
 * The sandboxes run in this process. The runs that meet faults are main() in process on a pool of
 * three workers (inProcessPool), at most three at once, each against its own sandbox: they mostly
 * wait on timeouts and backoff, so three at a time take about as long as the slowest, and three
 * workers load the bundle three times where a process a run would start nine. The run that meets
 * the mid-run outage is spawned (runCli, async, never spawnSync): the binary, its exit code and the
 * files it leaves. The fault-free references and the resumed run are main() in process
 * (runInProcess). The fault table runs alone: its clean runs are a burst of CPU that other files'
 * rate-limited runs (api/pacer.cli.test.ts) must not meet on top of these.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAULT_KIND_NAMES, type FaultKindName } from '../../src/sandbox/index.js';
import { inProcessPool, runCli, runInProcess, scratchDir, type CliOptions } from '../helpers/cli.js';
import {
  SANDBOX_KEYS,
  startTestSandbox,
  withSandbox,
  type RunningSandbox,
  type SandboxOptions,
} from '../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
/** Small enough to start in ~0.3 s, large enough for tens of pages. */
const DATA: SandboxOptions = { seed: 5, companies: 20_000 };
/** Apart from the data seed on purpose: the faults change, the data stays. */
const FAULT_SEED = 2026;
const EVERY_KIND = [...FAULT_KIND_NAMES];

/** The retry loop of src/api/http.ts and src/api/retry.ts, as the budget below models it. */
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 30_000;
/** Retry-After of the sandbox's injected 503 and 429. */
const INJECTED_RETRY_AFTER_MS = 1000;

/**
 * The longest one request can take before the client gives up: every attempt runs to its timeout
 * (the deadline covers headers and body), and the n-th wait is the full-jitter ceiling
 * min(cap, base * 2^n), or the Retry-After when that is longer (a floor, never shortened).
 */
function retryBudgetMs(timeoutSeconds: number, maxRetries: number, retryAfterMs = INJECTED_RETRY_AFTER_MS): number {
  let waits = 0;
  for (let retry = 0; retry < maxRetries; retry++)
    waits += Math.max(Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry), retryAfterMs);
  return (maxRetries + 1) * timeoutSeconds * 1000 + waits;
}

let healthy: RunningSandbox;
let shopifyDomains: string;

beforeAll(async () => {
  healthy = await startTestSandbox(DATA);
  // The contacts runs' input, made in process: not under test here.
  const companies = await runInProcess(['companies', '-t', 'Shopify', '--max', '200', '--columns', 'domain'], {
    url: healthy.url,
    apiKey: KEY,
  });
  expect(companies.code).toBe(0);
  shopifyDomains = companies.stdout;
});
afterAll(async () => {
  await healthy?.close();
});

const POOL_SIZE = 3;
const pool = inProcessPool(POOL_SIZE);
let idleWorkers = POOL_SIZE;
const waitingForWorker: Array<() => void> = [];

/**
 * A run that meets faults, in process on a worker of its own: it waits for one to be free before
 * its clock starts, so its time is its own run's, never a wait in a queue. No `cwd` (the workers
 * share the process's): its paths are absolute, and `scan` names its directory for the key check.
 */
async function timedInPool(args: string[], options: Omit<CliOptions, 'cwd' | 'wrap'>) {
  if (idleWorkers > 0) idleWorkers -= 1;
  else await new Promise<void>((resolveTurn) => waitingForWorker.push(resolveTurn));
  try {
    const startedAt = performance.now();
    const run = await pool(args, { apiKey: KEY, timeoutMs: 90_000, ...options });
    return { ...run, elapsedMs: performance.now() - startedAt };
  } finally {
    const next = waitingForWorker.shift();
    if (next) next();
    else idleWorkers += 1;
  }
}

/** A spawned run, timed; or, `inProcess`, a run of main() in process (a reference, or a follow-up on the same state). */
async function timed(args: string[], options: CliOptions, inProcess = false) {
  const startedAt = performance.now();
  const run = await (inProcess ? runInProcess : runCli)(args, { apiKey: KEY, timeoutMs: 90_000, ...options });
  return { ...run, elapsedMs: performance.now() - startedAt };
}

const totalFaults = (sandbox: RunningSandbox) =>
  FAULT_KIND_NAMES.reduce((sum, kind) => sum + sandbox.stats().faults[kind], 0);

describe('30% faults of every kind, and latency spikes: output byte-identical to a fault-free run', () => {
  // Retries enough that no request meets nine faults in a row (0.3^9 ≈ 2e-5); a 1 s timeout keeps
  // the silent kinds (stall-mid-body, no-response) cheap.
  const RETRIES = ['--timeout', '1', '--max-retries', '8'];
  const FLAKY: SandboxOptions = {
    failRate: 0.3,
    faults: EVERY_KIND,
    faultSeed: FAULT_SEED,
    latencySpikeMs: 300,
    latencySpikeRate: 0.1,
  };
  const CASES: Array<{ name: string; args: string[]; input?: () => string }> = [
    // 1,135 rows in pages of 40: ~30 pages, one at a time.
    { name: 'companies', args: ['--page-size', '40', 'companies', '-t', 'Shopify', '--format', 'ndjson'] },
    // 200 domains, calls cut at --limit and split: concurrent calls whose answers come back out of order.
    {
      name: 'contacts',
      args: ['contacts', '--seniority', 'cxo,vp,director', '--limit', '30', '--format', 'csv'],
      input: () => shopifyDomains,
    },
    // Company pages and contact calls interleaved.
    {
      name: 'pipeline',
      args: [
        '--page-size',
        '25',
        'pipeline',
        '-t',
        'Klaviyo',
        '--seniority',
        'cxo,vp',
        '--limit',
        '40',
        '--format',
        'csv',
      ],
    },
  ];

  it.concurrent.for(CASES)('$name', { timeout: 90_000 }, async ({ name, args, input }, { expect }) => {
    // Both in process: the fault-free reference, and the run against the faults on a worker of the pool.
    const clean = await timed(args, { url: healthy.url, ...(input ? { input: input() } : {}) }, true);
    expect(clean.code).toBe(0);
    expect(clean.stdout.length).toBeGreaterThan(1000);
    await withSandbox({ ...DATA, ...FLAKY }, async (flaky) => {
      const faulty = await timedInPool([...RETRIES, ...args], {
        url: flaky.url,
        ...(input ? { input: input() } : {}),
      });
      const { faults, requests } = flaky.stats();
      console.log(
        `${name}: clean ${Math.round(clean.elapsedMs)} ms; with faults ${Math.round(faulty.elapsedMs)} ms, ` +
          `${requests.total} requests, ${totalFaults(flaky)} faults ${JSON.stringify(faults)}`,
      );
      expect(faulty.stderr).toBe('');
      expect(faulty.code).toBe(0);
      expect(faulty.stdout).toBe(clean.stdout);
      // The kinds are dealt from a shuffled deck: ten faults or more means every kind was met.
      expect(totalFaults(flaky)).toBeGreaterThanOrEqual(FAULT_KIND_NAMES.length);
      for (const kind of FAULT_KIND_NAMES) expect(faults[kind], kind).toBeGreaterThan(0);
      expect(faults['latency-spike']).toBeGreaterThan(0);
    });
  });
});

describe.concurrent('a total outage: exit 5 within the retry budget, one line, no output file', () => {
  const TIMEOUT_SECONDS = 1;
  const MAX_RETRIES = 2;
  const RETRIES = ['--timeout', String(TIMEOUT_SECONDS), '--max-retries', String(MAX_RETRIES)];
  const ATTEMPTS = MAX_RETRIES + 1;
  // Every kind; and only the slowest (each attempt runs to its timeout or waits out Retry-After),
  // which takes the run close to its budget.
  const MIXES: Array<[string, FaultKindName[]]> = [
    ['every kind', EVERY_KIND],
    ['the slowest kinds', ['no-response', 'stall-mid-body', '503', '429']],
  ];
  // --concurrency 1: one request at a time, so the attempts can be counted.
  const COMMANDS: Array<{
    name: string;
    endpoint: string;
    args: (out: string, dir: string) => string[];
    input?: () => string;
  }> = [
    { name: 'companies', endpoint: '/companies', args: (out) => ['companies', '-t', 'Shopify', '-o', out] },
    {
      name: 'contacts',
      endpoint: '/contacts',
      args: (out) => ['contacts', '--concurrency', '1', '-o', out],
      input: () => shopifyDomains,
    },
    {
      name: 'pipeline --state',
      endpoint: '/companies',
      args: (out, dir) => ['pipeline', '-t', 'Shopify', '--concurrency', '1', '--state', join(dir, 'state'), '-o', out],
    },
  ];
  const CASES = MIXES.flatMap(([mix, faults]) => COMMANDS.map((command) => ({ ...command, mix, faults })));

  it.concurrent.for(CASES)(
    '$name, $mix',
    { timeout: 90_000 },
    async ({ name, mix, faults, endpoint, args, input }, { expect }) => {
      const budgetMs = retryBudgetMs(TIMEOUT_SECONDS, MAX_RETRIES);
      const dir = await scratchDir();
      const out = join(dir, 'out.csv');
      await writeFile(out, 'last week\n');
      await withSandbox({ ...DATA, failRate: 1, faults, faultSeed: FAULT_SEED }, async (down) => {
        // In process, on a worker of the pool: the exit code, the stderr and the files are main()'s.
        const run = await timedInPool([...RETRIES, ...args(out, dir)], {
          url: down.url,
          scan: [dir],
          ...(input ? { input: input() } : {}),
        });
        console.log(
          `outage, ${name}, ${mix}: ${Math.round(run.elapsedMs)} ms ` +
            `(budget ${budgetMs} ms), ${down.stats().requests.total} requests`,
        );
        expect(run.code).toBe(5);
        // A 429 uses up no --max-retries (everyone waits out its Retry-After instead): each one met is one
        // attempt more, and a wait.
        const rateLimited = down.stats().faults['429'] + down.stats().faults['429-no-retry-after'];
        const lines = run.stderr.trimEnd().split('\n');
        const failure = new RegExp(
          `^prospect: no answer from 127\\.0\\.0\\.1:${new URL(down.url).port} for ${endpoint} ` +
            `after \\d+ attempts \\(last: .+\\)$`,
        );
        // One line says what failed, the next what to do; a pipeline with --state adds one saying how to resume.
        const failureAt = lines.findIndex((line) => failure.test(line));
        expect(failureAt).toBeGreaterThanOrEqual(0);
        expect(lines.filter((line) => failure.test(line))).toHaveLength(1);
        expect(lines[failureAt + 1]).toMatch(/^(Try again later|The service is slow|The connection kept failing)/);
        const others = lines.filter((_line, index) => index !== failureAt && index !== failureAt + 1);
        expect(others).toEqual(
          name.includes('--state')
            ? [expect.stringMatching(/^prospect: the checkpoint in .* run the same command again to resume\.$/)]
            : [],
        );
        expect(await readFile(out, 'utf8')).toBe('last week\n');
        expect((await readdir(dir)).filter((name) => name !== 'state')).toEqual(['out.csv']);
        // It retried, and then stopped: a later batch may have sent one request before the run closed its client.
        expect(down.stats().requests.total).toBeGreaterThanOrEqual(ATTEMPTS);
        expect(down.stats().requests.total).toBeLessThanOrEqual(ATTEMPTS + rateLimited + 1);
      });
    },
  );
});

describe.concurrent('pipeline --state through an outage mid-run', () => {
  const ARGS = (state: string, out: string) => [
    '--page-size',
    '25',
    'pipeline',
    '-t',
    'Klaviyo',
    '--seniority',
    'cxo,vp',
    '--limit',
    '40',
    '--concurrency',
    '2',
    '--state',
    state,
    '-o',
    out,
  ];
  const RETRIES = ['--timeout', '1', '--max-retries', '2'];

  const NAME =
    'exits 5 within the retry budget, keeps a checkpoint, ' +
    'and resumes on a healthy same-seed sandbox to byte-identical output';
  it(
    NAME,
    async ({ expect }) => {
      const reference = await scratchDir();
      // The clean reference and the resumed run in process; the run that meets the outage is spawned.
      const clean = await timed(
        [...RETRIES, ...ARGS(join(reference, 'state'), join(reference, 'leads.csv'))],
        { url: healthy.url, cwd: reference },
        true,
      );
      expect(clean.code).toBe(0);
      const expected = await readFile(join(reference, 'leads.csv'), 'utf8');

      const work = await scratchDir();
      const state = join(work, 'state');
      const out = join(work, 'leads.csv');
      await writeFile(out, 'last week\n');
      // The service answers 25 of the ~45 requests a clean run makes, then fails every one, with every
      // kind of fault. (Company pages run ahead of contact calls, so the first pages are committed only
      // after ~20 requests.)
      const outage = await withSandbox(
        { ...DATA, failRate: 1, faults: EVERY_KIND, faultSeed: FAULT_SEED, faultsAfter: 25 },
        (down) => timed([...RETRIES, ...ARGS(state, out)], { url: down.url, cwd: work }),
      );
      const budgetMs = retryBudgetMs(1, 2);
      console.log(
        `outage mid-run: ${Math.round(outage.elapsedMs)} ms ` +
          `(clean run ${Math.round(clean.elapsedMs)} ms + budget ${budgetMs} ms)`,
      );
      expect(outage.code).toBe(5);
      expect(outage.stderr).toMatch(
        /^prospect: no answer from 127\.0\.0\.1:\d+ for \/(companies|contacts) after \d+ attempts/m,
      );
      expect(outage.stderr).toMatch(
        /^prospect: the checkpoint in .* keeps \d+ committed rows; run the same command again to resume\.$/m,
      );
      expect(await readFile(out, 'utf8')).toBe('last week\n');
      const checkpoint = JSON.parse(await readFile(join(state, 'current', 'checkpoint.json'), 'utf8'));
      expect(checkpoint.pages_done).toBeGreaterThanOrEqual(1);
      expect(checkpoint.listing_done).toBe(false);

      // The faults stop: a healthy sandbox with the same seed, on another port. Its cursors are sealed
      // with the dataset, so the checkpoint's cursor is valid there.
      await withSandbox(DATA, async (revived) => {
        expect(revived.url).not.toBe(healthy.url);
        const resumed = await timed(
          ['--verbose', ...RETRIES, ...ARGS(state, out)],
          { url: revived.url, cwd: work },
          true,
        );
        expect(resumed.code).toBe(0);
        expect(resumed.stderr).toMatch(new RegExp(`Resuming the unfinished run ${checkpoint.run_id}`));
      });
      expect(await readFile(out, 'utf8')).toBe(expected);
      expect(existsSync(join(state, 'current', 'checkpoint.json'))).toBe(false);
    },
    120_000,
  );
});
