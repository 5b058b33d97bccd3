/**
 * The pacer (src/api/pacer.ts) on a clock of the test's own: what it lets start, and when.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RequestPacer, type PacerTicket } from '../../src/api/pacer.js';

// The fake timers' clock: timers fire in order, each seeing the time it was due at.
beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

const pacer = (maxInFlight = 16) => new RequestPacer({ maxInFlight, now: () => Date.now() });
const advance = (ms: number) => vi.advanceTimersByTimeAsync(ms);
const never = () => undefined;

/** Starts `count` admissions; returns the tickets admitted so far, as they come. */
function queue(p: RequestPacer, count: number): PacerTicket[] {
  const admitted: PacerTicket[] = [];
  for (let i = 0; i < count; i++) void p.admit([], never).then((ticket) => admitted.push(ticket));
  return admitted;
}

describe('RequestPacer', () => {
  it('starts one request, then one more every 400 ms for the first second, whatever the answers', async () => {
    const p = pacer();
    const admitted = queue(p, 10);
    await advance(0);
    expect(admitted).toHaveLength(1);
    await advance(399);
    expect(admitted).toHaveLength(1);
    await advance(1);
    expect(admitted).toHaveLength(2);
    await advance(400);
    expect(admitted).toHaveLength(3);
  });

  it('after a second without a 429, one more in flight per answer, up to the pool', async () => {
    const p = pacer(4);
    const admitted = queue(p, 10);
    await advance(1200);
    expect(admitted).toHaveLength(4);
    p.finish(admitted[0]!, { rateLimited: false, answered: true });
    await advance(0);
    expect(admitted).toHaveLength(5);
  });

  it('a 429 holds every request until its Retry-After, then spaces them at the rate the service allowed', async () => {
    const p = pacer(16);
    const admitted = queue(p, 40);
    const finished = new Set<PacerTicket>();
    const answerAll = () => {
      for (const ticket of admitted.filter((each) => !finished.has(each))) {
        finished.add(ticket);
        p.finish(ticket, { rateLimited: false, answered: true });
      }
    };
    await advance(1200); // started at 0, 400, 800, 1200
    expect(admitted.map((ticket) => ticket.startedAt)).toEqual([0, 400, 800, 1200]);
    answerAll(); // each answer lets one more start: five at 1200
    await advance(10);
    answerAll(); // nine answered; ten more start at 1210
    await advance(5);
    const burst = admitted.filter((each) => !finished.has(each));
    expect(burst).toHaveLength(10);
    // At 1215 the first 429: eight answered attempts started in the second before it (400, 800, 1200 and five at 1200).
    p.finish(burst[0]!, { rateLimited: true, retryAfterMs: 1000 });
    expect(p.pausedForMs()).toBe(1000);
    // The rest of the burst was on the wire already: their 429s change nothing.
    for (const ticket of burst.slice(1)) p.finish(ticket, { rateLimited: true, retryAfterMs: 1000 });
    expect(p.pausedForMs()).toBe(1000);
    const before = admitted.length;
    await advance(999);
    expect(admitted).toHaveLength(before);
    await advance(1);
    expect(admitted).toHaveLength(before + 1);
    await advance(2000);
    // Spaced 1000 ms / 8 answers × 1.05 = 131.25 ms apart, never more than five (half the ten) in flight.
    const starts = admitted.slice(before).map((ticket) => ticket.startedAt);
    expect(starts[0]).toBe(2215);
    expect(
      starts
        .slice(1)
        .map((at, index) => at - starts[index]!)
        .every((gap) => gap >= 131.25 && gap < 133),
    ).toBe(true);
    expect(starts).toHaveLength(5);
  });

  it('a stopped request leaves the queue; close() fails whoever still waits', async () => {
    const p = pacer(1);
    const first = p.admit([], never);
    await advance(0);
    await first;
    const controller = new AbortController();
    const stopped = p.admit([controller.signal], () => new Error('withdrawn'));
    const waiting = p.admit([], never);
    controller.abort();
    await expect(stopped).rejects.toThrow('withdrawn');
    p.close(new Error('closed'));
    await expect(waiting).rejects.toThrow('closed');
  });
});
