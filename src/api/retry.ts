/**
 * Every "ask again?" decision of the client, and its defaults. The request loop (request-loop.ts)
 * only describes what happened to an attempt and does what this module says.
 *
 * What is retried (everything else fails at once):
 * - connection failures (refused, reset, closed mid-body, cut short), and timeouts; never a
 *   certificate or TLS-version failure or an unknown host, which asking again cannot fix;
 * - 408, 429 and every 5xx, honouring Retry-After as a floor; a 429 is waited out by the pacer
 *   (pacer.ts) for every request at once, uses up no `maxRetries`, and ends the request after
 *   MAX_RATE_LIMITED_ATTEMPTS of them or a Retry-After over the cap;
 * - a malformed 2xx body (HTML, invalid JSON, wrong shape), at most MAX_MALFORMED_RETRIES times:
 *   proxies and load balancers do serve transient HTML error pages with status 200, but a service
 *   that keeps answering the wrong shape will not change its mind, so the budget is small. Not for
 *   calls charged per answer (verify): a complete 2xx may have cost a unit and is never asked again.
 *
 * Backoff as the widely trusted SDKs do it (AWS "full jitter", Stripe): the n-th retry waits a
 * uniformly random time in [0, min(cap, base * 2^n)). Randomness spreads many clients apart after
 * a shared outage; the random source is injectable so tests are deterministic.
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

/** The defaults of the client, which the CLI's flags show as theirs. */
export const RETRY_DEFAULTS = {
  /** Per attempt, covering headers and body. */
  timeoutMs: 30_000,
  maxRetries: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
} as const;

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = {
  maxRetries: RETRY_DEFAULTS.maxRetries,
  baseDelayMs: RETRY_DEFAULTS.baseDelayMs,
  maxDelayMs: RETRY_DEFAULTS.maxDelayMs,
  random: Math.random,
};

/** A request the service keeps answering 429 gives up after this many of them, however long it waited. */
export const MAX_RATE_LIMITED_ATTEMPTS = 30;

/** Malformed 2xx answers are retried at most this many times (see the top of this file). */
export const MAX_MALFORMED_RETRIES = 2;

// ---------------------------------------------------------------------------------------------
// What is worth asking again

/** 408, 429 and every 5xx are worth asking again; nothing else is. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599);
}

/** Errors that retrying cannot fix: a misspelt host, and any certificate or TLS-version failure. */
const FINAL_NETWORK_CODES = new Set(['ENOTFOUND']);

/** A certificate or TLS failure (Node's and OpenSSL's codes): asking again meets the same certificate. */
export function isTlsFailureCode(code: string): boolean {
  return /^(ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_)/.test(code);
}

/** Bugs in how prospect called undici; never retried, surfaced as internal errors (exit 1). */
const PROGRAMMER_ERROR_CODES = new Set([
  'UND_ERR_INVALID_ARG',
  'UND_ERR_NOT_SUPPORTED',
  'ERR_INVALID_ARG_TYPE',
  'ERR_INVALID_ARG_VALUE',
]);

const TIMEOUT_CODES = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'ETIMEDOUT',
]);

/**
 * What a transport failure (no complete answer) is: a timeout or a network error (both retried), a
 * network error that retrying cannot fix (`final`), or a bug in prospect's call (`bug`).
 */
export function classifyTransportFailure(
  code: string | undefined,
  timedOut: boolean,
): 'timeout' | 'network' | 'final' | 'bug' {
  if (timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) return 'timeout';
  if (code === undefined) return 'network';
  if (PROGRAMMER_ERROR_CODES.has(code)) return 'bug';
  return FINAL_NETWORK_CODES.has(code) || isTlsFailureCode(code) ? 'final' : 'network';
}

// ---------------------------------------------------------------------------------------------
// How long to wait

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

/** The wait the service asked for: the Retry-After header, else the `retry_after` of the error body. */
export function requestedWaitMs(
  header: string | string[] | undefined,
  details: Readonly<Record<string, unknown>>,
): number | undefined {
  return parseRetryAfter(header) ?? retryAfterFromBody(details);
}

// ---------------------------------------------------------------------------------------------
// The decision

export type RetryDecision =
  /** Ask again after `delayMs`; `paced`: a 429, whose wait is the pacer's (delayMs 0). */
  | { retry: true; delayMs: number; paced?: true }
  | { retry: false; why: 'exhausted' }
  | { retry: false; why: 'rate-limited' }
  | { retry: false; why: 'retry-after-too-long'; retryAfterMs: number };

/** A failed attempt that could be worth another, as the loop saw it. */
export interface FailedAttempt {
  /** Which attempt of this request failed: 1 for the first. */
  attempt: number;
  /** The attempt was a 429. */
  rateLimited?: boolean;
  /** 429s this request met so far, this one included: they use up no `maxRetries`. */
  rateLimitedAttempts?: number;
  /** The service's Retry-After, in ms, if it asked for one. */
  retryAfterMs?: number | undefined;
  /** A complete 2xx whose body was not what the contract describes. */
  malformed?: boolean;
  /** Malformed answers already retried for this request. */
  malformedRetries?: number;
  /** The service charges each answered call (verify): a complete 2xx is never asked again. */
  chargedPerAnswer?: boolean;
}

/** A Retry-After longer than the cap ends the request at once, a 429's (which the pacer waits out) as any other's. */
function retryAfterTooLong(retryAfterMs: number | undefined, policy: RetryPolicy): retryAfterMs is number {
  return retryAfterMs !== undefined && retryAfterMs > policy.maxDelayMs;
}

/**
 * Whether to try again after a failed attempt, and how long to wait. `retryAfterMs` is a floor: the
 * wait is never shorter than the service asked. A Retry-After longer than the cap ends the run at
 * once: waiting minutes silently would look like a hang, and waiting less than asked would only
 * earn another 429.
 */
export function decideRetry(failed: FailedAttempt, policy: RetryPolicy): RetryDecision {
  const { retryAfterMs } = failed;
  if (failed.rateLimited) {
    if (retryAfterTooLong(retryAfterMs, policy)) return { retry: false, why: 'retry-after-too-long', retryAfterMs };
    if ((failed.rateLimitedAttempts ?? 1) >= MAX_RATE_LIMITED_ATTEMPTS) return { retry: false, why: 'rate-limited' };
    return { retry: true, delayMs: 0, paced: true };
  }
  const retryIndex = failed.attempt - 1 - (failed.rateLimitedAttempts ?? 0);
  if (failed.malformed && (failed.chargedPerAnswer || (failed.malformedRetries ?? 0) >= MAX_MALFORMED_RETRIES)) {
    return { retry: false, why: 'exhausted' };
  }
  if (retryIndex >= policy.maxRetries) return { retry: false, why: 'exhausted' };
  if (retryAfterTooLong(retryAfterMs, policy)) return { retry: false, why: 'retry-after-too-long', retryAfterMs };
  const jittered = backoffDelayMs(retryIndex, policy);
  return { retry: true, delayMs: Math.max(jittered, retryAfterMs ?? 0) };
}
