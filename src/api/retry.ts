/**
 * Every "ask again?" decision of the client; request-loop.ts only does what this says.
 * Retried: connection failures and timeouts (never an unknown host or a TLS failure); 408, 429 and 5xx,
 * Retry-After as a floor (a 429 is the pacer's to wait out, for every request at once, and uses up no
 * `maxRetries`); a malformed 2xx at most MAX_MALFORMED_RETRIES times (a proxy's transient HTML page),
 * never on a call charged per answer. Backoff is full jitter (AWS, Stripe): a random wait in
 * [0, min(cap, base * 2^n)), the random source injectable.
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

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = { ...RETRY_DEFAULTS, random: Math.random };

/** A request the service keeps answering 429 gives up after this many of them, however long it waited. */
export const MAX_RATE_LIMITED_ATTEMPTS = 30;

/** A service that keeps answering the wrong shape will not change its mind: the budget is small. */
export const MAX_MALFORMED_RETRIES = 2;

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599);
}

/** A certificate or TLS failure (Node's and OpenSSL's codes): asking again meets the same certificate. */
export function isTlsFailureCode(code: string): boolean {
  return /^(ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_)/.test(code);
}

/** Bugs in how prospect called undici: never retried, surfaced as internal errors. */
const BUG_CODES = new Set([
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

/** A transport failure: a timeout or a network error (retried), one asking again cannot fix, or a bug. */
export function classifyTransportFailure(
  code: string | undefined,
  timedOut: boolean,
): 'timeout' | 'network' | 'final' | 'bug' {
  if (timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) return 'timeout';
  if (code === undefined) return 'network';
  if (BUG_CODES.has(code)) return 'bug';
  return code === 'ENOTFOUND' || isTlsFailureCode(code) ? 'final' : 'network';
}

/** The full-jitter wait before retry number `retryIndex` (0 for the first retry). */
export function backoffDelayMs(retryIndex: number, policy: RetryPolicy): number {
  return Math.floor(policy.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retryIndex));
}

/**
 * A Retry-After header, delay-seconds or an HTTP-date, as ms from `nowMs` (a past date: 0); undefined
 * when absent or unreadable. Decimals are read: being strict would ignore a wait the service asked for.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (text === undefined || text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  // Only real dates: Date.parse also reads bare numbers like "-5" or "5 6".
  const at = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** The contract's 429 body carries `retry_after` (seconds); used when the header is missing. */
export function retryAfterFromBody(details: Readonly<Record<string, unknown>>): number | undefined {
  const value = details.retry_after;
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return Math.ceil(value * 1000);
  return typeof value === 'string' ? parseRetryAfter(value) : undefined;
}

export function requestedWaitMs(
  header: string | string[] | undefined,
  details: Readonly<Record<string, unknown>>,
): number | undefined {
  return parseRetryAfter(header) ?? retryAfterFromBody(details);
}

export type RetryDecision =
  /** `paced`: a 429, whose wait is the pacer's (delayMs 0). */
  | { retry: true; delayMs: number; paced?: true }
  | { retry: false; why: 'exhausted' | 'rate-limited' }
  | { retry: false; why: 'retry-after-too-long'; retryAfterMs: number };

/** A failed attempt that could be worth another, as the loop saw it. */
export interface FailedAttempt {
  /** 1 for the first. */
  attempt: number;
  rateLimited?: boolean;
  /** 429s this request met so far, this one included. */
  rateLimitedAttempts?: number;
  retryAfterMs?: number | undefined;
  /** A complete 2xx whose body was not what the contract describes. */
  malformed?: boolean;
  /** Malformed answers already retried for this request. */
  malformedRetries?: number;
  /** The service charges each answered call (verify): a complete 2xx is never asked again. */
  chargedPerAnswer?: boolean;
}

/**
 * Whether to try again, and after how long: never sooner than Retry-After. A Retry-After over the
 * cap ends the request at once: minutes of silence would look like a hang, and less would earn a 429.
 */
export function decideRetry(failed: FailedAttempt, policy: RetryPolicy): RetryDecision {
  const { retryAfterMs, rateLimitedAttempts = 0 } = failed;
  const tooLong = retryAfterMs !== undefined && retryAfterMs > policy.maxDelayMs;
  if (failed.rateLimited) {
    if (tooLong) return { retry: false, why: 'retry-after-too-long', retryAfterMs };
    if (rateLimitedAttempts >= MAX_RATE_LIMITED_ATTEMPTS) return { retry: false, why: 'rate-limited' };
    return { retry: true, delayMs: 0, paced: true };
  }
  const retryIndex = failed.attempt - 1 - rateLimitedAttempts;
  const malformedSpent =
    failed.malformed && (failed.chargedPerAnswer || (failed.malformedRetries ?? 0) >= MAX_MALFORMED_RETRIES);
  if (malformedSpent || retryIndex >= policy.maxRetries) return { retry: false, why: 'exhausted' };
  if (tooLong) return { retry: false, why: 'retry-after-too-long', retryAfterMs };
  return { retry: true, delayMs: Math.max(backoffDelayMs(retryIndex, policy), retryAfterMs ?? 0) };
}
