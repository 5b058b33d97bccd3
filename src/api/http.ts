/**
 * One GET with JSON out, retried as the trusted SDKs do. Knows nothing of endpoints' meaning:
 * the caller gives the path, the query and a schema check; this file gives back a checked value
 * or an ApiError.
 *
 * What is retried (everything else fails at once):
 * - connection failures (refused, reset, closed mid-body, cut short), and timeouts;
 * - 408, 429 and every 5xx, honouring Retry-After as a floor;
 * - a malformed 2xx body (HTML, invalid JSON, wrong shape), at most twice: proxies and load
 *   balancers do serve transient HTML error pages with status 200, but a service that keeps
 *   answering the wrong shape will not change its mind, so the budget is small. Not for calls
 *   charged per answer (verify): a complete 2xx may have cost a unit and is never asked again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, request } from 'undici';
import {
  AbortedError,
  ApiError,
  MalformedResponseError,
  ServiceError,
  errorFromResponse,
  isRetryableStatus,
  redact,
  retriesExhaustedError,
  retryAfterTooLongError,
  type LastFailure,
} from './errors.js';
import { decideRetry, parseRetryAfter, retryAfterFromBody, type RetryPolicy } from './retry.js';
import type { SchemaCheck } from './schemas.js';

/** Reported once per attempt, after it ends: for --debug and progress. Never carries the key. */
export interface RequestEvent {
  method: 'GET';
  /** The full request URL. The key travels in a header, never in the URL. */
  url: string;
  /** `/companies`, `/contacts`, `/verify`. */
  endpoint: string;
  /** 1 for the first try of a request. */
  attempt: number;
  /** The HTTP status, when response headers arrived. */
  status?: number;
  durationMs: number;
  /** Set when another attempt follows after this wait. */
  retryInMs?: number;
  /** One-line description of what went wrong with this attempt. */
  error?: string;
}

export interface HttpClientOptions {
  /** Already checked by the client: http(s), no credentials, plain http only on loopback. */
  baseUrl: URL;
  apiKey: string;
  timeoutMs: number;
  policy: RetryPolicy;
  connections: number;
  userAgent: string;
  signal?: AbortSignal;
  onRequest?: (event: RequestEvent) => void;
}

export interface GetJsonRequest<T> {
  /** The path after `/api/v1`, e.g. `/companies`. */
  endpoint: string;
  /** Query parameters in order; pairs with an undefined value are left out. */
  params: ReadonlyArray<readonly [string, string | undefined]>;
  check: (json: unknown) => SchemaCheck<T>;
  /**
   * A faster parse of a 2xx body from its bytes (companies pages, src/api/fast-json.ts): the JSON
   * value, or undefined to parse the text as usual. A value that `check` refuses is parsed again the
   * usual way, so every failure reads as before.
   */
  parseBytes?: (body: Buffer) => unknown;
  /** The service counts a unit per answered call: never ask again after a complete 2xx. */
  chargedPerAnswer?: boolean;
  /** Extra request headers (Idempotency-Key). Never the Authorization header. */
  headers?: Readonly<Record<string, string>>;
}

export interface JsonAnswer<T> {
  value: T;
  status: number;
  headers: IncomingHttpHeaders;
  attempts: number;
}

export interface HttpClient {
  getJson<T>(req: GetJsonRequest<T>): Promise<JsonAnswer<T>>;
  close(): Promise<void>;
}

/** Malformed 2xx answers are retried at most this many times (see the top of this file). */
export const MAX_MALFORMED_RETRIES = 2;

type RetryableFailure = LastFailure | { kind: 'malformed'; problem: string; status: number; hint?: string };

type AttemptResult<T> =
  | { kind: 'answer'; value: T; status: number; headers: IncomingHttpHeaders }
  | { kind: 'final'; error: ApiError | Error; status?: number }
  | { kind: 'retryable'; failure: RetryableFailure; status?: number; retryAfterMs?: number };

export function createHttpClient(options: HttpClientOptions): HttpClient {
  const agent = new Agent({
    connections: options.connections,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connect: { timeout: options.timeoutMs },
  });
  const headers = {
    authorization: `Bearer ${options.apiKey}`,
    accept: 'application/json',
    'user-agent': options.userAgent,
  };
  // close() aborts whatever is in flight or waiting, so no retry loop outlives the client.
  const lifetime = new AbortController();
  const stopSignals = [options.signal, lifetime.signal].filter((signal): signal is AbortSignal => signal !== undefined);

  /** Why an attempt or a wait was stopped from outside: the caller's signal, or close(). */
  function stoppedError(endpoint: string): Error | undefined {
    if (options.signal?.aborted) return new AbortedError(endpoint);
    if (lifetime.signal.aborted) return new Error('prospect: the API client was closed while a request was in flight');
    return undefined;
  }

  async function getJson<T>(req: GetJsonRequest<T>): Promise<JsonAnswer<T>> {
    if (lifetime.signal.aborted) throw new Error('prospect: the API client was used after close()');
    const url = buildUrl(options.baseUrl, req.endpoint, req.params);
    let malformedRetries = 0;

    for (let attempt = 1; ; attempt++) {
      const stopped = stoppedError(req.endpoint);
      if (stopped) throw stopped;
      const startedAt = performance.now();
      const result = await runAttempt(req, url);
      const base = { method: 'GET' as const, url, endpoint: req.endpoint, attempt, durationMs: Math.round(performance.now() - startedAt) };
      const status = result.status;

      if (result.kind === 'answer') {
        report({ ...base, status: result.status });
        return { value: result.value, status: result.status, headers: result.headers, attempts: attempt };
      }
      if (result.kind === 'final') {
        report({ ...base, ...(status !== undefined ? { status } : {}), error: result.error.message });
        throw result.error;
      }

      const failure = result.failure;
      const retryIndex = attempt - 1;
      const decision = canRetry(failure, req, malformedRetries)
        ? decideRetry(retryIndex, result.retryAfterMs, options.policy)
        : ({ retry: false, why: 'exhausted' } as const);
      report({
        ...base,
        ...(status !== undefined ? { status } : {}),
        error: describeForEvent(failure, req.endpoint),
        ...(decision.retry ? { retryInMs: decision.delayMs } : {}),
      });
      if (!decision.retry) {
        if (decision.why === 'retry-after-too-long' && failure.kind === 'status') {
          throw retryAfterTooLongError(req.endpoint, attempt, decision.retryAfterMs, options.policy.maxDelayMs, failure.error);
        }
        throw giveUpError(req.endpoint, attempt, failure);
      }
      if (failure.kind === 'malformed') malformedRetries++;
      await waitUnlessStopped(decision.delayMs, stopSignals, () => stoppedError(req.endpoint));
    }
  }

  function report(event: RequestEvent): void {
    options.onRequest?.(event);
  }

  async function runAttempt<T>(req: GetJsonRequest<T>, url: string): Promise<AttemptResult<T>> {
    const attemptSignal = createAttemptSignal(stopSignals, options.timeoutMs);
    let status: number | undefined;
    let responseHeaders: IncomingHttpHeaders = {};
    let body: string | Buffer;
    // Only the transport is inside the try: a failure to interpret a complete answer is not a
    // network error and must not be retried as one.
    try {
      const response = await request(url, {
        method: 'GET',
        headers: req.headers ? { ...req.headers, ...headers } : headers,
        dispatcher: agent,
        signal: attemptSignal.signal,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      });
      status = response.statusCode;
      responseHeaders = response.headers;
      body = req.parseBytes ? asBuffer(await response.body.bytes()) : await response.body.text();
    } catch (error) {
      const stopped = stoppedError(req.endpoint);
      if (stopped) throw stopped;
      const failure = classifyTransportError(error, attemptSignal.timedOut, options.timeoutMs, options.apiKey, options.baseUrl);
      if (failure.kind === 'final') return { ...failure, ...(status !== undefined ? { status } : {}) };
      return { kind: 'retryable', failure, ...(status !== undefined ? { status } : {}) };
    } finally {
      attemptSignal.dispose();
    }
    return interpretResponse(req, url, status, responseHeaders, body);
  }

  function interpretResponse<T>(
    req: GetJsonRequest<T>,
    url: string,
    status: number,
    responseHeaders: IncomingHttpHeaders,
    body: string | Buffer,
  ): AttemptResult<T> {
    if (status >= 200 && status <= 299) {
      const checked = checkJsonBody(req, status, responseHeaders, body);
      if (checked.ok) return { kind: 'answer', value: checked.value, status, headers: responseHeaders };
      return { kind: 'retryable', status, failure: { kind: 'malformed', status, problem: redact(checked.problem, options.apiKey), ...(checked.hint ? { hint: checked.hint } : {}) } };
    }
    const location = resolveLocation(responseHeaders.location, url);
    const error = errorFromResponse({
      endpoint: req.endpoint,
      status,
      bodyText: typeof body === 'string' ? body : decodeText(body),
      secret: options.apiKey,
      ...(location !== undefined ? { location } : {}),
    });
    if (!isRetryableStatus(status)) return { kind: 'final', error, status };
    const retryAfterMs = parseRetryAfter(responseHeaders['retry-after']) ?? retryAfterFromBody(error.details);
    return { kind: 'retryable', status, failure: { kind: 'status', error }, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }

  async function close(): Promise<void> {
    if (lifetime.signal.aborted) return;
    lifetime.abort();
    await agent.close();
  }

  return { getJson, close };
}

function canRetry(failure: RetryableFailure, req: GetJsonRequest<unknown>, malformedRetries: number): boolean {
  if (failure.kind !== 'malformed') return true;
  return !req.chargedPerAnswer && malformedRetries < MAX_MALFORMED_RETRIES;
}

function giveUpError(endpoint: string, attempts: number, failure: RetryableFailure): ApiError {
  if (failure.kind === 'malformed') {
    return new MalformedResponseError(`the service answered ${endpoint} with ${failure.problem}`, {
      endpoint,
      attempts,
      status: failure.status,
      reason: failure.problem,
      ...(failure.hint ? { hint: failure.hint } : {}),
    });
  }
  return retriesExhaustedError(endpoint, attempts, failure);
}

function describeForEvent(failure: RetryableFailure, endpoint: string): string {
  switch (failure.kind) {
    case 'malformed':
      return `the service answered ${endpoint} with ${failure.problem}`;
    case 'status':
      return failure.error.message;
    case 'network':
      return failure.description;
    case 'timeout':
      return `timed out after ${failure.timeoutMs} ms`;
  }
}

// ---------------------------------------------------------------------------------------------
// URL

/** baseUrl + `/api/v1` + endpoint + query, each key and value percent-encoded (%20, not +). */
export function buildUrl(baseUrl: URL, endpoint: string, params: GetJsonRequest<unknown>['params']): string {
  const basePath = baseUrl.pathname.replace(/\/+$/, '');
  // Tolerate a base URL given with the API prefix already on it.
  const prefix = basePath.endsWith('/api/v1') ? basePath : `${basePath}/api/v1`;
  const query = params
    .filter((pair): pair is readonly [string, string] => pair[1] !== undefined)
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
    .join('&');
  return `${baseUrl.origin}${prefix}${endpoint}${query === '' ? '' : `?${query}`}`;
}

function resolveLocation(location: string | string[] | undefined, requestUrl: string): string | undefined {
  const value = Array.isArray(location) ? location[0] : location;
  if (value === undefined) return undefined;
  try {
    return new URL(value, requestUrl).href;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Body

type BodyCheck<T> = { ok: true; value: T } | { ok: false; problem: string; hint?: string };

/** The body as undici's `text()` gives it: UTF-8, a leading byte order mark dropped. */
function decodeText(body: Buffer): string {
  const bom = body.length > 2 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  return body.toString('utf8', bom);
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A 2xx body checked into a value, or the problem with it. Exported for bench/ (the local CPU figure). */
export function checkJsonBody<T>(req: Pick<GetJsonRequest<T>, 'check' | 'parseBytes'>, status: number, headers: IncomingHttpHeaders, body: string | Buffer): BodyCheck<T> {
  if (typeof body !== 'string') {
    const parsed = req.parseBytes?.(body);
    if (parsed !== undefined) {
      const checked = req.check(parsed);
      if (checked.ok) return checked;
    }
    body = decodeText(body);
  }
  const bodyText = body;
  if (bodyText.trim() === '') return { ok: false, problem: `an empty body (status ${status})` };
  let json: unknown;
  try {
    json = JSON.parse(bodyText);
  } catch (error) {
    if (looksLikeHtml(headers, bodyText)) {
      return {
        ok: false,
        problem: `HTML, not JSON (status ${status})`,
        hint: 'A proxy or a web page answered instead of the service; check the base URL.',
      };
    }
    const why = error instanceof Error ? `: ${error.message.replace(/\s+/g, ' ').slice(0, 120)}` : '';
    return { ok: false, problem: `truncated or invalid JSON (status ${status})${why}` };
  }
  const checked = req.check(json);
  if (checked.ok) return checked;
  return { ok: false, problem: `an unexpected shape (status ${status}): ${checked.problem}` };
}

function looksLikeHtml(headers: IncomingHttpHeaders, bodyText: string): boolean {
  const contentType = String(headers['content-type'] ?? '').toLowerCase();
  return contentType.includes('html') || /^\s*</.test(bodyText);
}

// ---------------------------------------------------------------------------------------------
// Transport errors

/** Errors that retrying cannot fix: a misspelt host, a bad certificate. */
const FINAL_NETWORK_CODES = new Set([
  'ENOTFOUND',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

/** Bugs in how prospect called undici; never retried, surfaced as internal errors (exit 1). */
const PROGRAMMER_ERROR_CODES = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED', 'ERR_INVALID_ARG_TYPE', 'ERR_INVALID_ARG_VALUE']);

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);

const NETWORK_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection broken',
  UND_ERR_SOCKET: 'connection closed by the other side',
  UND_ERR_CLOSED: 'connection closed',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'answer cut short',
  EAI_AGAIN: 'host name lookup failed temporarily',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
};

function errorCode(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // Happy-eyeballs connects (localhost → ::1 and 127.0.0.1) fail with an AggregateError.
  const first = (error as { errors?: unknown }).errors;
  return Array.isArray(first) ? errorCode(first[0]) : undefined;
}

function classifyTransportError(
  error: unknown,
  timedOut: boolean,
  timeoutMs: number,
  secret: string,
  baseUrl: URL,
): LastFailure | { kind: 'final'; error: ApiError | Error } {
  const code = errorCode(error);
  if (timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) return { kind: 'timeout', timeoutMs, cause: error };
  const message = error instanceof Error ? redact(error.message, secret).replace(/\s+/g, ' ').trim() : String(error);
  if (code !== undefined && PROGRAMMER_ERROR_CODES.has(code)) {
    return { kind: 'final', error: new Error(`prospect: invalid request to the service: ${message}`, { cause: error }) };
  }
  const words = (code !== undefined ? NETWORK_WORDS[code] : undefined) ?? (message || 'network error');
  const description = code !== undefined ? `${words} (${code})` : words;
  if (code !== undefined && FINAL_NETWORK_CODES.has(code)) {
    return {
      kind: 'final',
      error: new ServiceError(`cannot reach the service at ${baseUrl.origin}: ${description}`, {
        reason: description,
        code,
        hint: 'Check the base URL.',
        cause: error,
      }),
    };
  }
  return { kind: 'network', description, cause: error };
}

// ---------------------------------------------------------------------------------------------
// Abort and timeout

interface AttemptSignal {
  signal: AbortSignal;
  readonly timedOut: boolean;
  dispose(): void;
}

/** A signal that fires when any of the parents does; dispose() removes its listeners. */
function linkSignals(parents: readonly AbortSignal[]): { controller: AbortController; dispose(): void } {
  const controller = new AbortController();
  const onParentAbort = (): void => controller.abort(new Error('stopped'));
  for (const parent of parents) {
    if (parent.aborted) onParentAbort();
    else parent.addEventListener('abort', onParentAbort, { once: true });
  }
  return {
    controller,
    dispose() {
      for (const parent of parents) parent.removeEventListener('abort', onParentAbort);
    },
  };
}

/**
 * One signal per attempt that fires when any stop signal does (the caller's, close()) or on the
 * attempt's own deadline (covering headers and the whole body; undici's body timeout alone is
 * only an idle timer). Built by hand rather than with AbortSignal.any so that no listener is
 * left on the long-lived signals after thousands of requests.
 */
function createAttemptSignal(parents: readonly AbortSignal[], timeoutMs: number): AttemptSignal {
  const linked = linkSignals(parents);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    linked.controller.abort(new Error(`timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  return {
    signal: linked.controller.signal,
    get timedOut() {
      return timedOut;
    },
    dispose() {
      clearTimeout(timer);
      linked.dispose();
    },
  };
}

/** Sleeps between attempts; any stop signal (the caller's, close()) cuts the wait short. */
async function waitUnlessStopped(ms: number, stopSignals: readonly AbortSignal[], stoppedError: () => Error | undefined): Promise<void> {
  const linked = linkSignals(stopSignals);
  try {
    await sleep(ms, undefined, { signal: linked.controller.signal });
  } catch (error) {
    throw stoppedError() ?? error;
  } finally {
    linked.dispose();
  }
}
