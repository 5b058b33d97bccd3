/** Fault injection: latency and spikes, a reproducible fail rate of every fault kind, a per-key rate limit with Retry-After. */
import { get } from 'node:http';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { FAULT_KIND_NAMES, type FaultKindName, type SandboxOptions } from '../../src/sandbox/index.js';
import { call, SANDBOX_KEYS, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

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

/** What a plain HTTP client saw of one answer, byte by byte. */
interface Probe {
  status: number | undefined;
  headers: Record<string, string | string[] | undefined>;
  /** Body bytes received before the answer ended, was cut, or the probe gave up. */
  received: number;
  /** complete: the whole Content-Length; closed: the connection closed first; silent: nothing more came before the probe gave up. */
  ending: 'complete' | 'closed' | 'silent';
  body: string;
}

/** A GET with node:http that gives up after `patienceMs` of waiting and says how the answer ended. */
function probe(base: string, path: string, patienceMs = 300): Promise<Probe> {
  return new Promise((resolve) => {
    const seen: Probe = { status: undefined, headers: {}, received: 0, ending: 'silent', body: '' };
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (ending: Probe['ending']) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve({ ...seen, ending, body: Buffer.concat(chunks).toString('utf8') });
    };
    const timer = setTimeout(() => finish('silent'), patienceMs);
    const req = get(`${base}${path}`, { headers: { authorization: `Bearer ${SANDBOX_KEYS.growth}` }, agent: false }, (res) => {
      seen.status = res.statusCode;
      seen.headers = res.headers;
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        seen.received += chunk.length;
      });
      res.on('end', () => finish(seen.received === Number(res.headers['content-length']) ? 'complete' : 'closed'));
      res.on('aborted', () => finish('closed'));
      res.on('error', () => finish('closed'));
    });
    req.on('error', () => finish('closed'));
  });
}

async function withSandbox<T>(options: SandboxOptions, body: (sandbox: TestSandbox) => Promise<T>): Promise<T> {
  const sandbox = await startTestSandbox({ companies: 2000, ...options });
  try {
    return await body(sandbox);
  } finally {
    await sandbox.close();
  }
}

const PAGE = '/api/v1/companies?technology=jQuery&limit=40';
/** Kinds that end an answer at once, for tests that send many requests. */
const QUICK_KINDS: FaultKindName[] = ['500', '502', '503', '503-no-retry-after', '429', '429-no-retry-after', 'drop', 'reset-mid-body'];

/** Status, or how the connection ended when no complete answer came. */
async function outcomes(sandbox: TestSandbox, count: number): Promise<string[]> {
  const seen: string[] = [];
  for (let k = 0; k < count; k++) {
    const answer = await probe(sandbox.url, PAGE);
    seen.push(answer.ending === 'complete' ? String(answer.status) : `${answer.status ?? 'no answer'}, ${answer.ending}`);
  }
  return seen;
}

describe('fault kinds (--faults), each alone at --fail-rate 1', () => {
  const EXPECTED: Record<FaultKindName, (answer: Probe, full: Probe) => void> = {
    '500': (answer) => {
      expect([answer.status, answer.ending, JSON.parse(answer.body).error.code]).toEqual([500, 'complete', 'internal_error']);
      expect(answer.headers['retry-after']).toBeUndefined();
    },
    '502': (answer) => {
      expect([answer.status, answer.ending]).toEqual([502, 'complete']);
      expect(answer.headers['content-type']).toMatch(/^text\/html/);
      expect(answer.body).toMatch(/^<html>/);
    },
    '503': (answer) => {
      expect([answer.status, answer.ending, answer.headers['retry-after']]).toEqual([503, 'complete', '1']);
    },
    '503-no-retry-after': (answer) => {
      expect([answer.status, answer.ending, answer.headers['retry-after']]).toEqual([503, 'complete', undefined]);
    },
    '429': (answer) => {
      expect([answer.status, answer.ending, answer.headers['retry-after']]).toEqual([429, 'complete', '1']);
      expect(JSON.parse(answer.body).error).toMatchObject({ code: 'rate_limited', retry_after: 1 });
    },
    '429-no-retry-after': (answer) => {
      expect([answer.status, answer.ending, answer.headers['retry-after']]).toEqual([429, 'complete', undefined]);
      expect(JSON.parse(answer.body).error.retry_after).toBeUndefined();
    },
    drop: (answer) => {
      expect([answer.status, answer.ending, answer.received]).toEqual([undefined, 'closed', 0]);
    },
    'reset-mid-body': (answer, full) => {
      // The real answer's status and full Content-Length, then half of it, then the connection closes.
      expect([answer.status, answer.headers['content-length'], answer.ending]).toEqual([200, String(full.received), 'closed']);
      expect(answer.received).toBe(Math.floor(full.received / 2));
    },
    'stall-mid-body': (answer, full) => {
      // The same half answer, then nothing: only the client's patience ends it.
      expect([answer.status, answer.headers['content-length'], answer.ending]).toEqual([200, String(full.received), 'silent']);
      expect(answer.received).toBe(Math.floor(full.received / 2));
    },
    'no-response': (answer) => {
      expect([answer.status, answer.ending, answer.received]).toEqual([undefined, 'silent', 0]);
    },
  };

  it.each(FAULT_KIND_NAMES)('%s', async (kind) => {
    const full = await withSandbox({}, (healthy) => probe(healthy.url, PAGE));
    expect(full.ending).toBe('complete');
    await withSandbox({ failRate: 1, faults: [kind] }, async (sandbox) => {
      EXPECTED[kind](await probe(sandbox.url, PAGE), full);
      const { faults, requests } = sandbox.stats();
      expect(requests.companies).toBe(1);
      expect(Object.entries(faults).filter(([, count]) => count > 0)).toEqual([[kind, 1]]);
    });
  });

  it('the control plane is never faulted, and a stopping sandbox ends the answers it holds open', async () => {
    const sandbox = await startTestSandbox({ companies: 2000, failRate: 1, faults: ['no-response'] });
    const held = probe(sandbox.url, PAGE, 5000);
    expect((await call(sandbox.url, '/_sandbox/stats')).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const startedAt = performance.now();
    await sandbox.close();
    expect(performance.now() - startedAt).toBeLessThan(400);
    expect((await held).ending).toBe('closed');
  });
});

describe('reproducible faults (--fault-seed, --faults-after)', () => {
  it('the same fault seed fails the same requests the same way, whatever the data seed; another fault seed does not', async () => {
    const run = (options: SandboxOptions) => withSandbox({ failRate: 0.4, faults: QUICK_KINDS, ...options }, (sandbox) => outcomes(sandbox, 40));
    const first = await run({ seed: 1, faultSeed: 77 });
    expect(first.filter((o) => o !== '200').length).toBeGreaterThan(8);
    expect(await run({ seed: 2, faultSeed: 77 })).toEqual(first);
    expect(await run({ seed: 1, faultSeed: 78 })).not.toEqual(first);
    // Without --fault-seed, the dataset seed seeds the faults.
    expect(await run({ seed: 77 })).toEqual(await run({ seed: 3, faultSeed: 77 }));
  });

  it('a lower --fail-rate fails a subset of the requests a higher one fails', async () => {
    const failing = async (failRate: number) =>
      withSandbox({ failRate, faults: ['500'], faultSeed: 5 }, async (sandbox) => (await outcomes(sandbox, 60)).flatMap((o, index) => (o === '200' ? [] : [index])));
    const some = await failing(0.2);
    const more = await failing(0.5);
    expect(some.length).toBeGreaterThan(3);
    expect(more.length).toBeGreaterThan(some.length);
    expect(more).toEqual(expect.arrayContaining(some));
  });

  it('deals the kinds like cards: the first K faults, and each K after, meet each of the K kinds once', async () => {
    await withSandbox({ failRate: 1, faults: [...FAULT_KIND_NAMES], faultSeed: 11 }, async (sandbox) => {
      const counts = () => FAULT_KIND_NAMES.map((kind) => sandbox.stats().faults[kind]);
      // Short patience: stall-mid-body and no-response never end on their own.
      for (let k = 0; k < FAULT_KIND_NAMES.length; k++) await probe(sandbox.url, PAGE, 100);
      expect(counts()).toEqual(FAULT_KIND_NAMES.map(() => 1));
      for (let k = 0; k < FAULT_KIND_NAMES.length; k++) await probe(sandbox.url, PAGE, 100);
      expect(counts()).toEqual(FAULT_KIND_NAMES.map(() => 2));
      expect(sandbox.stats().requests.total).toBe(2 * FAULT_KIND_NAMES.length);
    });
  });

  it('--faults-after N serves the first N API requests normally, then the faults begin', async () => {
    await withSandbox({ failRate: 1, faults: ['503'], faultsAfter: 5 }, async (sandbox) => {
      expect(await outcomes(sandbox, 8)).toEqual(['200', '200', '200', '200', '200', '503', '503', '503']);
      expect(sandbox.stats().faults['503']).toBe(3);
    });
  });
});

describe('latency spikes (--latency-spike, --latency-spike-rate)', () => {
  it('adds the spike, on top of --latency, to about the given share of requests, counted in stats', async () => {
    await withSandbox({ latencyMs: 20, latencySpikeMs: 150, latencySpikeRate: 0.4, faultSeed: 3 }, async (sandbox) => {
      const durations: number[] = [];
      for (let k = 0; k < 25; k++) {
        const startedAt = performance.now();
        expect((await call(sandbox.url, PAGE, { key: SANDBOX_KEYS.growth })).status).toBe(200);
        durations.push(performance.now() - startedAt);
      }
      expect(Math.min(...durations)).toBeGreaterThanOrEqual(18);
      const spiked = durations.filter((ms) => ms >= 165).length;
      expect(spiked).toBe(sandbox.stats().faults['latency-spike']);
      expect(spiked).toBeGreaterThan(3);
      expect(spiked).toBeLessThan(22);
    });
  });

  it('refuses a spike rate without a spike, and fault kinds it does not know', async () => {
    await expect(startTestSandbox({ latencySpikeRate: 0.5 })).rejects.toThrow(/latencySpikeRate needs latencySpikeMs/);
    await expect(startTestSandbox({ failRate: 0.1, faults: ['teapot' as FaultKindName] })).rejects.toThrow(/faults must name/);
    await expect(startTestSandbox({ failRate: 0.1, faults: [] })).rejects.toThrow(/faults must name/);
  });
});
