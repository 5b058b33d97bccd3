/**
 * Backoff policy, as the widely trusted SDKs do it (AWS "full jitter", Stripe): the n-th retry
 * waits a uniformly random time in [0, min(cap, base * 2^n)). Randomness spreads many clients
 * apart after a shared outage; the random source is injectable so tests are deterministic.
 */

export interface RetryPolicy {
  /** Retries after the first attempt; 5 means at most 6 attempts. */
  maxRetries: number;
  baseDelayMs: number;
  /** Longest single wait. A Retry-After above it makes the client give up instead of waiting. */
  maxDelayMs: number;
  /** Returns a number in [0, 1), like Math.random. */
  random: () => number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = {
  maxRetries: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  random: Math.random,
};

/** The full-jitter wait before retry number `retryIndex` (0 for the first retry). */
export function backoffDelayMs(retryIndex: number, policy: RetryPolicy): number {
  // 2^retryIndex overflows to Infinity long after it passes any sane cap; Math.min handles that.
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retryIndex);
  const fraction = Math.min(Math.max(policy.random(), 0), 1);
  return Math.floor(fraction * ceiling);
}

/**
 * Parses a Retry-After header: delay-seconds ("120") or an HTTP-date ("Wed, 21 Oct 2015
 * 07:28:00 GMT"). Returns milliseconds to wait from `nowMs`, or undefined when absent or
 * unreadable (then only the backoff applies). A date in the past means "now": 0.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (text === undefined || text === '') return undefined;
  // RFC 9110 says whole seconds; a decimal is accepted because being strict would mean ignoring
  // a wait the service asked for.
  if (/^\d+(\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  // Only real HTTP-dates: Date.parse also reads bare numbers like "-5" or "5 6" as dates.
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/** The contract's 429 body carries `retry_after` (seconds); used when the header is missing. */
export function retryAfterFromBody(details: Readonly<Record<string, unknown>>): number | undefined {
  const value = details.retry_after;
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return Math.ceil(value * 1000);
  if (typeof value === 'string') return parseRetryAfter(value);
  return undefined;
}

export type RetryDecision =
  | { retry: true; delayMs: number }
  | { retry: false; why: 'exhausted' }
  | { retry: false; why: 'retry-after-too-long'; retryAfterMs: number };

/**
 * Whether to try again after a failed attempt, and how long to wait. `retryIndex` counts the
 * retries already made. `retryAfterMs` is a floor: the wait is never shorter than the service
 * asked. A Retry-After longer than the cap ends the run at once: waiting minutes silently would
 * look like a hang, and waiting less than asked would only earn another 429.
 */
export function decideRetry(retryIndex: number, retryAfterMs: number | undefined, policy: RetryPolicy): RetryDecision {
  if (retryIndex >= policy.maxRetries) return { retry: false, why: 'exhausted' };
  if (retryAfterMs !== undefined && retryAfterMs > policy.maxDelayMs) {
    return { retry: false, why: 'retry-after-too-long', retryAfterMs };
  }
  const jittered = backoffDelayMs(retryIndex, policy);
  return { retry: true, delayMs: Math.max(jittered, retryAfterMs ?? 0) };
}
