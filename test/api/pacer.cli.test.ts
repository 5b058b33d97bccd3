/**
 * Rate limits (issue 27): against a sandbox limited to 5 requests a second, `contacts` over 300
 * domains at --concurrency 1, 4, 8 and 16 all succeed with byte-identical output, print no warning
 * (no MaxListenersExceededWarning either), and fewer than 5% of their requests are 429s: one pacer
 * for all workers waits out Retry-After for everyone and spaces requests at the rate it found.
 * Each run has its own sandbox, so the four run at once (each takes ~25 s: 5 requests a second).
 *
 * --concurrency 16 is spawned: the most workers on one pacer, where a listener leak would make Node
 * print MaxListenersExceededWarning on the process's stderr, which only a process shows. The others,
 * and the set-up runs (the domain list, the reference bytes), run the same main() in process
 * (inProcessPool: same environment, exit code and key-leak checks; what they pin is the bytes, the
 * 429s the sandbox counted and prospect's own stderr).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessPool, runCli } from '../helpers/cli.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
const ARGS = ['contacts', '--limit', '20', '--format', 'csv'];
/** The in-process runs at once: the three limited ones (the set-up runs go before them). */
const inProcess = inProcessPool(3);

let reference: RunningSandbox;
let domains: string;
let expected: string;

beforeAll(async () => {
  reference = await startTestSandbox();
  const listed = await inProcess(
    ['companies', '-t', 'Shopify', '--max', '1000', '--columns', 'domain', '--format', 'csv'],
    { url: reference.url, apiKey: KEY },
  );
  expect(listed.code).toBe(0);
  domains = listed.stdout;
  const unlimited = await inProcess(ARGS, { url: reference.url, apiKey: KEY, input: domains });
  expect(unlimited.code).toBe(0);
  expected = unlimited.stdout;
});
afterAll(async () => {
  await reference?.close();
});

describe('contacts under `prospect sandbox --rate-limit 5`', () => {
  it.concurrent.for([1, 4, 8, 16])(
    '--concurrency %i: the same bytes, no warning, under 5% 429s',
    { timeout: 180_000 },
    async (concurrency, { expect }) => {
      const limited = await startTestSandbox({ rateLimit: 5 });
      try {
        const run = await (concurrency === 16 ? runCli : inProcess)([...ARGS, '--concurrency', String(concurrency)], {
          url: limited.url,
          apiKey: KEY,
          input: domains,
          timeoutMs: 170_000,
        });
        const { requests, rate_limited: rateLimited } = limited.stats();
        console.log(
          `--rate-limit 5, --concurrency ${concurrency}: ${requests.total} requests, ${rateLimited} 429s (${((100 * rateLimited) / requests.total).toFixed(1)}%)`,
        );
        expect(run.stderr).toBe('');
        expect(run.code).toBe(0);
        expect(run.stdout).toBe(expected);
        expect(rateLimited).toBeGreaterThan(0);
        expect(rateLimited / requests.total).toBeLessThan(0.05);
      } finally {
        await limited.close();
      }
    },
  );
});
