/**
 * Fault injection: latency and spikes, a reproducible fail rate of every fault kind, a per-key rate
 * limit with Retry-After. No stopwatch decides an outcome: an answer is waited for until it ends on
 * its own, and the kinds that never end (stall-mid-body, no-response) are given up on once the
 * sandbox's counters (or the bytes received) show they have delivered all they ever will. Latency is
 * checked from below only: a loaded machine can make an answer later, never earlier.
 */
import { get, type ClientRequest } from 'node:http';
import { request } from 'undici';
import { describe, expect, it, vi } from 'vitest';
import { FAULT_KIND_NAMES, type FaultKindName } from '../../src/sandbox/index.js';
import {
  call,
  SANDBOX_KEYS,
  startTestSandbox,
  withSandbox,
  type RunningSandbox,
  type SandboxOptions,
} from '../helpers/sandbox.js';

const ok = '/api/v1/companies?technology=Shopify&limit=1';
/** Polls a condition for as long as a test may run: an event that never comes fails the test, a slow one does not. */
const UNTIL = { timeout: 25_000, interval: 5 };

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
    await withSandbox({ companies: 2000, latencyMs: 150 }, async (sandbox) => {
      const started = performance.now();
      const res = await call(sandbox.url, ok, { key: SANDBOX_KEYS.growth });
      expect(res.status).toBe(200);
      expect(performance.now() - started).toBeGreaterThanOrEqual(145);
      const unauth = performance.now();
      expect((await call(sandbox.url, ok)).status).toBe(401);
      expect(performance.now() - unauth).toBeGreaterThanOrEqual(145);
    });
  });

  it('fails about --fail-rate of requests with 500, 503 or a dropped connection, the same way for the same seed', async () => {
    const run = () =>
      withSandbox({ companies: 2000, failRate: 0.3 }, async (sandbox) => {
        const outcomes: Array<number | 'dropped'> = [];
        for (let k = 0; k < 120; k++) outcomes.push(await outcome(sandbox.url));
        return outcomes;
      });
    const first = await run();
    const failed = first.filter((o) => o !== 200);
    expect(failed.length / first.length).toBeGreaterThan(0.18);
    expect(failed.length / first.length).toBeLessThan(0.42);
    expect(new Set(failed)).toEqual(new Set([500, 503, 'dropped']));
    expect(await run()).toEqual(first);
  });

  it('answers 429 rate_limited with Retry-After over --rate-limit requests per second per key', async () => {
    await withSandbox({ companies: 2000, rateLimit: 3 }, async (sandbox) => {
      // Sent together, so they meet one window; a batch that straddles two windows is simply sent again.
      let statuses: number[] = [];
      let limited: Awaited<ReturnType<typeof call>> | undefined;
      for (let batch = 0; batch < 5 && !limited; batch++) {
        const answers = await Promise.all(
          Array.from({ length: 6 }, () => call(sandbox.url, ok, { key: SANDBOX_KEYS.growth })),
        );
        statuses = answers.map((res) => res.status);
        limited = answers.find((res) => res.status === 429);
      }
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(3);
      expect(limited).toBeDefined();
      expect(limited?.body.error.code).toBe('rate_limited');
      const retryAfter = Number(limited?.headers['retry-after']);
      expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
      expect(limited?.body.error.retry_after).toBe(retryAfter);
      // Another key has its own budget.
      expect((await call(sandbox.url, ok, { key: SANDBOX_KEYS.scale })).status).toBe(200);
      // Waiting at least Retry-After is enough (waiting longer, on a loaded machine, only helps).
      await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
      expect((await call(sandbox.url, ok, { key: SANDBOX_KEYS.growth })).status).toBe(200);
    });
  });
});

/** What a plain HTTP client saw of one answer, byte by byte. */
interface Probe {
  status: number | undefined;
  headers: Record<string, string | string[] | undefined>;
  /** Body bytes received before the answer ended, was cut, or the probe gave up. */
  received: number;
  /** complete: the whole Content-Length; closed: the connection closed first; silent: still open when the probe gave up. */
  ending: 'complete' | 'closed' | 'silent';
  body: string;
}

interface ProbeHandle {
  /** Resolves when the answer ends on its own, or when the probe gives up. */
  ended: Promise<Probe>;
  /** What has arrived so far. */
  seen(): Probe;
  /** Stops waiting: the answer so far, ending 'silent' unless it already ended. */
  giveUp(): Promise<Probe>;
}

/** A GET with node:http (its own connection) that records how the answer ends; it never gives up on its own. */
function startProbe(base: string, path: string): ProbeHandle {
  const seen: Probe = { status: undefined, headers: {}, received: 0, ending: 'silent', body: '' };
  const chunks: Buffer[] = [];
  let settle!: (probe: Probe) => void;
  const ended = new Promise<Probe>((resolve) => (settle = resolve));
  let settled = false;
  const snapshot = (): Probe => ({ ...seen, body: Buffer.concat(chunks).toString('utf8') });
  const finish = (ending: Probe['ending']) => {
    if (settled) return;
    settled = true;
    seen.ending = ending;
    settle(snapshot());
    req.destroy();
  };
  const req: ClientRequest = get(
    `${base}${path}`,
    { headers: { authorization: `Bearer ${SANDBOX_KEYS.growth}` }, agent: false },
    (res) => {
      seen.status = res.statusCode;
      seen.headers = res.headers;
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        seen.received += chunk.length;
      });
      res.on('end', () => finish(seen.received === Number(res.headers['content-length']) ? 'complete' : 'closed'));
      res.on('aborted', () => finish('closed'));
      res.on('error', () => finish('closed'));
    },
  );
  req.on('error', () => finish('closed'));
  return {
    ended,
    seen: snapshot,
    giveUp: () => {
      finish('silent');
      return ended;
    },
  };
}

/** Sends one request and waits until the sandbox has counted it (`countedBefore` + 1 requests in all). */
async function counted(sandbox: RunningSandbox, countedBefore: number): Promise<ProbeHandle> {
  const handle = startProbe(sandbox.url, PAGE);
  await vi.waitFor(() => expect(sandbox.stats().requests.total).toBe(countedBefore + 1), UNTIL);
  return handle;
}

const PAGE = '/api/v1/companies?technology=jQuery&limit=40';
/** Kinds that end an answer on their own, for tests that send many requests. */
const QUICK_KINDS: FaultKindName[] = [
  '500',
  '502',
  '503',
  '503-no-retry-after',
  '429',
  '429-no-retry-after',
  'drop',
  'reset-mid-body',
];

/** Status, or how the connection ended when no complete answer came, for kinds that all end on their own. */
async function outcomes(sandbox: RunningSandbox, count: number): Promise<string[]> {
  const seen: string[] = [];
  for (let k = 0; k < count; k++) {
    const answer = await startProbe(sandbox.url, PAGE).ended;
    seen.push(
      answer.ending === 'complete' ? String(answer.status) : `${answer.status ?? 'no answer'}, ${answer.ending}`,
    );
  }
  return seen;
}

describe('fault kinds (--faults), each alone at --fail-rate 1', () => {
  /** How to receive each kind: until it ends, or until it has sent all it ever will. */
  const RECEIVE: Partial<
    Record<FaultKindName, (sandbox: RunningSandbox, handle: ProbeHandle, full: Probe) => Promise<Probe>>
  > = {
    // Headers and half the body, then nothing: given up once the half has arrived.
    'stall-mid-body': async (_sandbox, handle, full) => {
      await vi.waitFor(() => expect(handle.seen().received).toBe(Math.floor(full.received / 2)), UNTIL);
      return handle.giveUp();
    },
    // Nothing at all: given up once the sandbox has counted the request and dealt it this fault.
    'no-response': async (sandbox, handle) => {
      await vi.waitFor(() => expect(sandbox.stats().faults['no-response']).toBe(1), UNTIL);
      return handle.giveUp();
    },
  };

  const EXPECTED: Record<FaultKindName, (answer: Probe, full: Probe) => void> = {
    '500': (answer) => {
      expect([answer.status, answer.ending, JSON.parse(answer.body).error.code]).toEqual([
        500,
        'complete',
        'internal_error',
      ]);
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
      expect([answer.status, answer.headers['content-length'], answer.ending]).toEqual([
        200,
        String(full.received),
        'closed',
      ]);
      expect(answer.received).toBe(Math.floor(full.received / 2));
    },
    'stall-mid-body': (answer, full) => {
      // The same half answer, then nothing: the connection is still open when the client gives up.
      expect([answer.status, answer.headers['content-length'], answer.ending]).toEqual([
        200,
        String(full.received),
        'silent',
      ]);
      expect(answer.received).toBe(Math.floor(full.received / 2));
    },
    'no-response': (answer) => {
      expect([answer.status, answer.ending, answer.received]).toEqual([undefined, 'silent', 0]);
    },
  };

  it.each(FAULT_KIND_NAMES)('%s', async (kind) => {
    const full = await withSandbox({ companies: 2000 }, (healthy) => startProbe(healthy.url, PAGE).ended);
    expect(full.ending).toBe('complete');
    await withSandbox({ companies: 2000, failRate: 1, faults: [kind] }, async (sandbox) => {
      const handle = startProbe(sandbox.url, PAGE);
      EXPECTED[kind](await (RECEIVE[kind]?.(sandbox, handle, full) ?? handle.ended), full);
      const { faults, requests } = sandbox.stats();
      expect(requests.companies).toBe(1);
      expect(Object.entries(faults).filter(([, count]) => count > 0)).toEqual([[kind, 1]]);
    });
  });

  it('the control plane is never faulted, and a stopping sandbox ends the answers it holds open', async () => {
    const sandbox = await startTestSandbox({ companies: 2000, failRate: 1, faults: ['no-response'] });
    const held = await counted(sandbox, 0);
    expect((await call(sandbox.url, '/_sandbox/stats')).status).toBe(200);
    // close() must end the held answer itself: the probe never gives up, so a close that waited for it would never return.
    await sandbox.close();
    expect(await held.ended).toMatchObject({ ending: 'closed', status: undefined, received: 0 });
  });
});

describe('reproducible faults (--fault-seed, --faults-after)', () => {
  it('the same fault seed fails the same requests the same way, whatever the data seed; another fault seed does not', async () => {
    const run = (options: SandboxOptions) =>
      withSandbox({ companies: 2000, failRate: 0.4, faults: QUICK_KINDS, ...options }, (sandbox) =>
        outcomes(sandbox, 40),
      );
    const first = await run({ seed: 1, faultSeed: 77 });
    expect(first.filter((o) => o !== '200').length).toBeGreaterThan(8);
    expect(await run({ seed: 2, faultSeed: 77 })).toEqual(first);
    expect(await run({ seed: 1, faultSeed: 78 })).not.toEqual(first);
    // Without --fault-seed, the dataset seed seeds the faults.
    expect(await run({ seed: 77 })).toEqual(await run({ seed: 3, faultSeed: 77 }));
  });

  it('a lower --fail-rate fails a subset of the requests a higher one fails', async () => {
    const failing = async (failRate: number) =>
      withSandbox({ companies: 2000, failRate, faults: ['500'], faultSeed: 5 }, async (sandbox) =>
        (await outcomes(sandbox, 60)).flatMap((o, index) => (o === '200' ? [] : [index])),
      );
    const some = await failing(0.2);
    const more = await failing(0.5);
    expect(some.length).toBeGreaterThan(3);
    expect(more.length).toBeGreaterThan(some.length);
    expect(more).toEqual(expect.arrayContaining(some));
  });

  it('deals the kinds like cards: the first K faults, and each K after, meet each of the K kinds once', async () => {
    await withSandbox(
      { companies: 2000, failRate: 1, faults: [...FAULT_KIND_NAMES], faultSeed: 11 },
      async (sandbox) => {
        const counts = () => FAULT_KIND_NAMES.map((kind) => sandbox.stats().faults[kind]);
        // One request at a time; the next goes once the sandbox has counted (and dealt) the last one.
        // Only the counters matter here, so no answer is waited for.
        for (let k = 0; k < FAULT_KIND_NAMES.length; k++) await (await counted(sandbox, k)).giveUp();
        expect(counts()).toEqual(FAULT_KIND_NAMES.map(() => 1));
        for (let k = FAULT_KIND_NAMES.length; k < 2 * FAULT_KIND_NAMES.length; k++)
          await (await counted(sandbox, k)).giveUp();
        expect(counts()).toEqual(FAULT_KIND_NAMES.map(() => 2));
        expect(sandbox.stats().requests.total).toBe(2 * FAULT_KIND_NAMES.length);
      },
    );
  });

  it('--faults-after N serves the first N API requests normally, then the faults begin', async () => {
    await withSandbox({ companies: 2000, failRate: 1, faults: ['503'], faultsAfter: 5 }, async (sandbox) => {
      expect(await outcomes(sandbox, 8)).toEqual(['200', '200', '200', '200', '200', '503', '503', '503']);
      expect(sandbox.stats().faults['503']).toBe(3);
    });
  });
});

describe('latency spikes (--latency-spike, --latency-spike-rate)', () => {
  it('adds the spike, on top of --latency, to about the given share of requests, counted in stats', async () => {
    await withSandbox(
      { companies: 2000, latencyMs: 20, latencySpikeMs: 150, latencySpikeRate: 0.4, faultSeed: 3 },
      async (sandbox) => {
        let spiked = 0;
        for (let k = 0; k < 25; k++) {
          const before = sandbox.stats().faults['latency-spike'];
          const startedAt = performance.now();
          expect((await call(sandbox.url, PAGE, { key: SANDBOX_KEYS.growth })).status).toBe(200);
          const tookMs = performance.now() - startedAt;
          // Which requests were spiked, the counter says; each took at least its latency (load only adds).
          const wasSpiked = sandbox.stats().faults['latency-spike'] - before;
          expect(wasSpiked === 0 || wasSpiked === 1).toBe(true);
          expect(tookMs).toBeGreaterThanOrEqual(wasSpiked ? 165 : 18);
          spiked += wasSpiked;
        }
        expect(spiked).toBeGreaterThan(3);
        expect(spiked).toBeLessThan(22);
      },
    );
  });

  it('refuses a spike rate without a spike, and fault kinds it does not know', async () => {
    await expect(startTestSandbox({ latencySpikeRate: 0.5 })).rejects.toThrow(/latencySpikeRate needs latencySpikeMs/);
    await expect(startTestSandbox({ failRate: 0.1, faults: ['teapot' as FaultKindName] })).rejects.toThrow(
      /faults must name/,
    );
    await expect(startTestSandbox({ failRate: 0.1, faults: [] })).rejects.toThrow(/faults must name/);
  });
});
