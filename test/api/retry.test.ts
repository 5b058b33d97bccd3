import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  MAX_MALFORMED_RETRIES,
  backoffDelayMs,
  classifyTransportFailure,
  decideRetry,
  isRetryableStatus,
  parseRetryAfter,
  retryAfterFromBody,
  type RetryPolicy,
} from '../../src/api/retry.js';

const policy = (overrides: Partial<RetryPolicy> = {}): RetryPolicy => ({
  maxRetries: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  random: () => 0.5,
  ...overrides,
});

describe('backoffDelayMs (full jitter)', () => {
  it('doubles the ceiling per retry and takes the random fraction of it', () => {
    const schedule = [0, 1, 2, 3, 4, 5].map((retry) => backoffDelayMs(retry, policy()));
    expect(schedule).toEqual([250, 500, 1000, 2000, 4000, 8000]);
  });

  it('caps the ceiling at maxDelayMs', () => {
    expect(backoffDelayMs(10, policy())).toBe(15_000);
    expect(backoffDelayMs(2000, policy({ random: () => 0.999999 }))).toBe(29_999);
  });

  it('waits nothing when the random source says 0', () => {
    expect(backoffDelayMs(3, policy({ random: () => 0 }))).toBe(0);
  });

  it('stays within [0, min(cap, base*2^n)) for any random value and retry', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (retry, fraction) => {
          const delay = backoffDelayMs(retry, policy({ random: () => fraction }));
          return delay >= 0 && delay <= Math.min(30_000, 500 * 2 ** retry) && Number.isInteger(delay);
        },
      ),
    );
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-06-01T12:00:00Z');

  it('reads delay-seconds', () => {
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('1.5', now)).toBe(1500);
    expect(parseRetryAfter(['2', '9'], now)).toBe(2000);
  });

  it('reads an HTTP-date as the time left until then', () => {
    expect(parseRetryAfter('Sun, 01 Jun 2025 12:00:07 GMT', now)).toBe(7000);
  });

  it('treats a date in the past as no wait', () => {
    expect(parseRetryAfter('Sun, 01 Jun 2025 11:00:00 GMT', now)).toBe(0);
  });

  it('ignores absent and unreadable values', () => {
    for (const value of [undefined, '', 'soon', '-5', '5 6', '1e3']) {
      expect(parseRetryAfter(value, now)).toBeUndefined();
    }
  });

  it('reads retry_after from a 429 body', () => {
    expect(retryAfterFromBody({ retry_after: 2 })).toBe(2000);
    expect(retryAfterFromBody({ retry_after: '4' })).toBe(4000);
    expect(retryAfterFromBody({ retry_after: -1 })).toBeUndefined();
    expect(retryAfterFromBody({})).toBeUndefined();
  });
});

describe('decideRetry', () => {
  it("a 429 is the pacer's to wait out, and uses up no retries", () => {
    expect(decideRetry({ attempt: 3, rateLimited: true, rateLimitedAttempts: 3 }, policy({ maxRetries: 0 }))).toEqual({
      retry: true,
      delayMs: 0,
      paced: true,
    });
    // Six 429s, then a 503: the first retry of --max-retries 1 is still there.
    expect(decideRetry({ attempt: 7, rateLimitedAttempts: 6 }, policy({ maxRetries: 1 }))).toEqual({
      retry: true,
      delayMs: 250,
    });
    expect(decideRetry({ attempt: 8, rateLimitedAttempts: 6 }, policy({ maxRetries: 1 }))).toEqual({
      retry: false,
      why: 'exhausted',
    });
  });

  it('a 429 ends the request at the 30th, or at a Retry-After over the cap', () => {
    const limited = (rateLimitedAttempts: number, retryAfterMs?: number) =>
      decideRetry({ attempt: rateLimitedAttempts, rateLimited: true, rateLimitedAttempts, retryAfterMs }, policy());
    expect(limited(29)).toMatchObject({ retry: true });
    expect(limited(30)).toEqual({ retry: false, why: 'rate-limited' });
    expect(limited(1, 30_000)).toMatchObject({ retry: true });
    expect(limited(1, 31_000)).toEqual({ retry: false, why: 'retry-after-too-long', retryAfterMs: 31_000 });
  });

  it('retries with the backoff delay while the budget lasts', () => {
    expect(decideRetry({ attempt: 0 + 1 }, policy())).toEqual({ retry: true, delayMs: 250 });
    expect(decideRetry({ attempt: 4 + 1 }, policy())).toEqual({ retry: true, delayMs: 4000 });
    expect(decideRetry({ attempt: 5 + 1 }, policy())).toEqual({ retry: false, why: 'exhausted' });
  });

  it('never waits less than Retry-After', () => {
    expect(decideRetry({ attempt: 0 + 1, retryAfterMs: 2000 }, policy())).toEqual({ retry: true, delayMs: 2000 });
    expect(decideRetry({ attempt: 4 + 1, retryAfterMs: 1000 }, policy())).toEqual({ retry: true, delayMs: 4000 });
  });

  it('gives up at once when Retry-After exceeds the cap', () => {
    expect(decideRetry({ attempt: 0 + 1, retryAfterMs: 31_000 }, policy())).toEqual({
      retry: false,
      why: 'retry-after-too-long',
      retryAfterMs: 31_000,
    });
  });

  it('makes exactly one attempt with maxRetries 0', () => {
    expect(decideRetry({ attempt: 0 + 1 }, policy({ maxRetries: 0 }))).toEqual({ retry: false, why: 'exhausted' });
  });
});

describe('what is worth asking again', () => {
  it('a malformed answer: twice at most, never on a call charged per answer', () => {
    expect(MAX_MALFORMED_RETRIES).toBe(2);
    expect(decideRetry({ attempt: 0 + 1, malformed: true, malformedRetries: 0 }, policy())).toEqual({
      retry: true,
      delayMs: 250,
    });
    expect(decideRetry({ attempt: 1 + 1, malformed: true, malformedRetries: 1 }, policy())).toEqual({
      retry: true,
      delayMs: 500,
    });
    expect(decideRetry({ attempt: 2 + 1, malformed: true, malformedRetries: 2 }, policy())).toEqual({
      retry: false,
      why: 'exhausted',
    });
    expect(
      decideRetry({ attempt: 0 + 1, malformed: true, malformedRetries: 0, chargedPerAnswer: true }, policy()),
    ).toEqual({ retry: false, why: 'exhausted' });
    // A status or network failure on a charged call got no answer, so it is asked again.
    expect(decideRetry({ attempt: 0 + 1, chargedPerAnswer: true }, policy())).toEqual({ retry: true, delayMs: 250 });
  });

  it('408, 429 and 5xx statuses', () => {
    expect([408, 429, 500, 502, 503, 504, 599].every(isRetryableStatus)).toBe(true);
    expect([200, 301, 400, 401, 403, 404, 405, 422, 600].some(isRetryableStatus)).toBe(false);
  });

  it('transport failures: timeouts and connection errors, not a misspelt host or a bad certificate', () => {
    expect(classifyTransportFailure('ECONNRESET', false)).toBe('network');
    expect(classifyTransportFailure(undefined, false)).toBe('network');
    expect(classifyTransportFailure('UND_ERR_SOCKET', false)).toBe('network');
    expect(classifyTransportFailure('ECONNRESET', true)).toBe('timeout');
    expect(classifyTransportFailure('UND_ERR_HEADERS_TIMEOUT', false)).toBe('timeout');
    expect(classifyTransportFailure('ENOTFOUND', false)).toBe('final');
    expect(classifyTransportFailure('CERT_HAS_EXPIRED', false)).toBe('final');
    expect(classifyTransportFailure('UND_ERR_INVALID_ARG', false)).toBe('bug');
  });
});
