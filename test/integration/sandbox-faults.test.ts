/** Fault injection: latency, a reproducible fail rate, a per-key rate limit with Retry-After. */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { call, SANDBOX_KEYS, startTestSandbox } from '../helpers/sandbox.js';

const ok = '/api/v1/companies?technology=Shopify&limit=1';

/** The outcome of one request: its status, or 'dropped' when the connection closed with no answer. */
async function outcome(base: string): Promise<number | 'dropped'> {
  try {
    const res = await request(`${base}${ok}`, { headers: { authorization: `Bearer ${SANDBOX_KEYS.growth}` } });
    await res.body.text();
    return res.statusCode;
  } catch {
    return 'dropped';
  }
}

describe('faults', () => {
  it('adds --latency before every API response', async () => {
    const sandbox = await startTestSandbox({ latencyMs: 150 });
    try {
      const started = performance.now();
      const res = await call(sandbox.url, ok, { key: SANDBOX_KEYS.growth });
      expect(res.status).toBe(200);
      expect(performance.now() - started).toBeGreaterThanOrEqual(145);
      const unauth = performance.now();
      expect((await call(sandbox.url, ok)).status).toBe(401);
      expect(performance.now() - unauth).toBeGreaterThanOrEqual(145);
    } finally {
      await sandbox.close();
    }
  });

  it('fails about --fail-rate of requests with 500, 503 or a dropped connection, the same way for the same seed', async () => {
    const run = async () => {
      const sandbox = await startTestSandbox({ failRate: 0.3 });
      try {
        const outcomes: Array<number | 'dropped'> = [];
        for (let k = 0; k < 120; k++) outcomes.push(await outcome(sandbox.url));
        return outcomes;
      } finally {
        await sandbox.close();
      }
    };
    const first = await run();
    const failed = first.filter((o) => o !== 200);
    expect(failed.length / first.length).toBeGreaterThan(0.18);
    expect(failed.length / first.length).toBeLessThan(0.42);
    expect(new Set(failed)).toEqual(new Set([500, 503, 'dropped']));
    expect(await run()).toEqual(first);
  });

  it('answers 429 rate_limited with Retry-After over --rate-limit requests per second per key', async () => {
    const sandbox = await startTestSandbox({ rateLimit: 3 });
    try {
      const statuses: number[] = [];
      let limited: Awaited<ReturnType<typeof call>> | undefined;
      for (let k = 0; k < 6; k++) {
        const res = await call(sandbox.url, ok, { key: SANDBOX_KEYS.growth });
        statuses.push(res.status);
        if (res.status === 429) limited ??= res;
      }
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(3);
      expect(limited).toBeDefined();
      expect(limited?.body.error.code).toBe('rate_limited');
      const retryAfter = Number(limited?.headers['retry-after']);
      expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
      expect(limited?.body.error.retry_after).toBe(retryAfter);
      // Another key has its own budget.
      expect((await call(sandbox.url, ok, { key: SANDBOX_KEYS.scale })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
      expect((await call(sandbox.url, ok, { key: SANDBOX_KEYS.growth })).status).toBe(200);
    } finally {
      await sandbox.close();
    }
  });
});
