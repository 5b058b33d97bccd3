/**
 * One GET with JSON out, asked again as retry.ts decides. Knows nothing of endpoints' meaning:
 * the caller gives the path, the query and a schema check; this file gives back a checked value
 * or a RequestError. It only loops: what a body is worth is body-check.ts's call, what a transport
 * failure means is transport-errors.ts's, and whether and when to ask again is retry.ts's.
 */
import { setMaxListeners } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { checkJsonBody } from './body-check.js';
import { createDispatcher, type NetworkOptions } from './dispatcher.js';
import { AbortedError, RequestError } from './errors.js';
import {
  describeFailure,
  errorFromResponse,
  malformedAnswerError,
  rateLimitedError,
  redact,
  retriesExhaustedError,
  retryAfterTooLongError,
  type LastFailure,
} from './error-responses.js';
import { decodedBody } from './content-encoding.js';
import { decideRetry, isRetryableStatus, requestedWaitMs, retryAfterTooLong, type RetryPolicy } from './retry.js';
import type { SchemaCheck } from './schemas.js';
import { RequestPacer, type PacerTicket } from './pacer.js';
import { createAttemptSignal, linkSignals, waitUnlessStopped } from './stop-signals.js';
import { describeTransportFailure, hostAndPort } from './transport-errors.js';
import { WaitWatch, type WaitNotice } from './wait-watch.js';

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
  status?: number | undefined;
  durationMs: number;
  /** Set when another attempt follows after this wait. */
  retryInMs?: number | undefined;
  /** One-line description of what went wrong with this attempt. */
  error?: string | undefined;
}

export interface HttpClientOptions {
  /** Already checked by the client: http(s), no credentials, plain http only on loopback. */
  baseUrl: URL;
  apiKey: string;
  timeoutMs: number;
  policy: RetryPolicy;
  connections: number;
  /** Proxy, trusted certificates and the connect timeout. */
  network: Pick<NetworkOptions, 'proxy' | 'ca' | 'connectTimeoutMs'>;
  userAgent: string;
  signal?: AbortSignal | undefined;
  onRequest?: ((event: RequestEvent) => void) | undefined;
  /** Told while a request has waited a while for its answer, and once more (undefined) when none waits. */
  onWaiting?: ((notice: WaitNotice | undefined) => void) | undefined;
  /** A pacer shared with the other clients of the same service and key; default: one of this client's own. */
  pacer?: RequestPacer | undefined;
}

export interface GetJsonRequest<T> {
  /** The path after `/api/v1`, e.g. `/companies`. */
  endpoint: string;
  /** Query parameters in order; pairs with an undefined or empty value are left out. */
  params: ReadonlyArray<readonly [string, string | undefined]>;
  check: (json: unknown) => SchemaCheck<T>;
  /**
   * Sees a 2xx body as soon as it is parsed, before `check` runs; the check then waits a turn of
   * the event loop, so a request this starts (the next page) is on the wire while the body is checked.
   */
  onBody?: ((json: unknown) => void) | undefined;
  /** The service counts a unit per answered call: never ask again after a complete 2xx. */
  chargedPerAnswer?: boolean;
  /** Extra request headers (Idempotency-Key). Never the Authorization header. */
  headers?: Readonly<Record<string, string>> | undefined;
  /** A paid call: told of each answer lost after the request went out, and asked before each retry after one. */
  paid?: PaidCallWatch | undefined;
  /**
   * Withdraws this request (its attempt in flight and any wait before the next): a listing closed
   * while a page it asked for ahead is on the wire. It then throws, and nobody is waiting for it.
   */
  signal?: AbortSignal | undefined;
}

/**
 * The budget's view of a paid call. An attempt whose answer was lost once the request was sent (a
 * reset or a timeout after sending, a 2xx whose body is cut, undecodable or unreadable) may have been
 * charged: the caller counts it, and a retry after it is sent only if the caller says there is room.
 */
export interface PaidCallWatch {
  answerLost(): void;
  /** False: the request ends with the lost attempt's error instead of asking again. */
  mayRetry(): boolean;
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

type RetryableFailure =
  | LastFailure
  /** `cut`: the body ended early (empty, or JSON that stops mid-way), not a complete body of the wrong shape. */
  | { kind: 'malformed'; problem: string; status: number; hint?: string | undefined; cut?: boolean };

type AttemptResult<T> =
  | { kind: 'answer'; value: T; status: number; headers: IncomingHttpHeaders }
  | { kind: 'final'; error: RequestError | Error; status?: number | undefined }
  | { kind: 'retryable'; failure: RetryableFailure; status?: number | undefined; retryAfterMs?: number | undefined };

/**
 * undici is loaded with the first request, not with this module, so a command that only needs the API's
 * defaults, checks or errors (config, a refused flag) starts without it.
 */
let undici: Promise<typeof import('undici')> | undefined;
// A CommonJS package imported at run time: Node gives its exports as named ones and as `default`,
// the bundle as `default` only.
const loadUndici = () =>
  (undici ??= import('undici').then((module) => (module as unknown as { default?: typeof module }).default ?? module));

/** A request the service keeps answering 429 gives up after this many of them, however long it waited. */
export const MAX_RATE_LIMITED_ATTEMPTS = 30;

export function createHttpClient(options: HttpClientOptions): HttpClient {
  let agent: Promise<Dispatcher> | undefined;
  const agentOf = () =>
    (agent ??= loadUndici().then((undici) =>
      createDispatcher(undici, {
        ...options.network,
        readTimeoutMs: options.timeoutMs,
        connections: options.connections,
      }),
    ));
  const headers = {
    authorization: `Bearer ${options.apiKey}`,
    accept: 'application/json',
    'accept-encoding': 'gzip',
    'user-agent': options.userAgent,
  };
  const service = hostAndPort(options.baseUrl);
  // close() aborts whatever is in flight or waiting, so no retry loop outlives the client.
  const lifetime = new AbortController();
  // One listener on the caller's signal for the whole client, however many requests run at once;
  // every attempt and wait listens to this one, whose listeners come and go with them.
  const stopAll = linkSignals(
    [options.signal, lifetime.signal].filter((signal): signal is AbortSignal => signal !== undefined),
  );
  setMaxListeners(0, stopAll.controller.signal);
  const stopSignals = [stopAll.controller.signal];
  const pacer = options.pacer ?? new RequestPacer({ maxInFlight: options.connections });
  const waitWatch = options.onWaiting ? new WaitWatch(service, options.onWaiting) : undefined;

  /** Why an attempt or a wait was stopped from outside: the caller's signal, close(), or the request withdrawn. */
  function stoppedError(req: GetJsonRequest<unknown>): Error | undefined {
    if (options.signal?.aborted) return new AbortedError(req.endpoint);
    if (lifetime.signal.aborted) return new Error('the API client was closed while a request was in flight');
    if (req.signal?.aborted) return new Error(`a request to ${req.endpoint} was withdrawn: its listing was closed`);
    return undefined;
  }

  async function getJson<T>(req: GetJsonRequest<T>): Promise<JsonAnswer<T>> {
    if (lifetime.signal.aborted) throw new Error('the API client was used after close()');
    const url = buildUrl(options.baseUrl, req.endpoint, req.params);
    const stops = req.signal === undefined ? stopSignals : [...stopSignals, req.signal];
    let malformedRetries = 0;

    let rateLimited = 0;
    for (let attempt = 1; ; attempt++) {
      const stopped = stoppedError(req);
      if (stopped) throw stopped;
      const ticket = await pacer.admit(stops, () => stoppedError(req));
      const startedAt = performance.now();
      const result = await runPacedAttempt(req, url, stops, ticket);
      const base = {
        method: 'GET' as const,
        url,
        endpoint: req.endpoint,
        attempt,
        durationMs: Math.round(performance.now() - startedAt),
        status: result.status,
      };

      if (result.kind === 'answer') {
        options.onRequest?.(base);
        return { value: result.value, status: result.status, headers: result.headers, attempts: attempt };
      }
      const lost = answerLost(result);
      if (lost) req.paid?.answerLost();
      if (result.kind === 'final') {
        options.onRequest?.({ ...base, error: result.error.message });
        throw result.error;
      }

      const { failure } = result;
      // A 429 is the pacer's to wait out, for every request at once; it uses up no --max-retries.
      if (result.status === 429 && failure.kind === 'status') {
        rateLimited++;
        if (retryAfterTooLong(result.retryAfterMs, options.policy)) {
          options.onRequest?.({ ...base, error: describeForEvent(failure, req.endpoint) });
          throw retryAfterTooLongError(
            req.endpoint,
            attempt,
            result.retryAfterMs,
            options.policy.maxDelayMs,
            failure.error,
          );
        }
        if (rateLimited >= MAX_RATE_LIMITED_ATTEMPTS)
          throw rateLimitedError(req.endpoint, attempt, service, failure.error);
        options.onRequest?.({
          ...base,
          error: describeForEvent(failure, req.endpoint),
          retryInMs: Math.round(pacer.pausedForMs()),
        });
        continue;
      }
      const decision = decideRetry(
        {
          retryIndex: attempt - 1 - rateLimited,
          retryAfterMs: result.retryAfterMs,
          // A paid call's cut body is a lost answer, asked again (same Idempotency-Key) as a reset is.
          malformed: failure.kind === 'malformed' && !(lost && req.paid !== undefined && failure.cut),
          malformedRetries,
          chargedPerAnswer: req.chargedPerAnswer ?? false,
        },
        options.policy,
      );
      // Asked only when a retry would be sent: a paid call's caller reserves its unit on a yes.
      const retry = decision.retry && (!lost || (req.paid?.mayRetry() ?? true));
      options.onRequest?.({
        ...base,
        error: describeForEvent(failure, req.endpoint),
        retryInMs: retry && decision.retry ? decision.delayMs : undefined,
      });
      if (!retry || !decision.retry) {
        if (!decision.retry && decision.why === 'retry-after-too-long' && failure.kind === 'status') {
          throw retryAfterTooLongError(
            req.endpoint,
            attempt,
            decision.retryAfterMs,
            options.policy.maxDelayMs,
            failure.error,
          );
        }
        throw failure.kind === 'malformed'
          ? malformedAnswerError(req.endpoint, attempt, failure.status, failure.problem, failure.hint)
          : retriesExhaustedError(req.endpoint, attempt, failure, service);
      }
      if (failure.kind === 'malformed') malformedRetries++;
      await waitUnlessStopped(decision.delayMs, stops, () => stoppedError(req));
    }
  }

  /** One attempt, admitted by the pacer and reported back to it; watched while it waits for an answer. */
  async function runPacedAttempt<T>(
    req: GetJsonRequest<T>,
    url: string,
    stops: readonly AbortSignal[],
    ticket: PacerTicket,
  ): Promise<AttemptResult<T>> {
    const watched = waitWatch?.start();
    let result: AttemptResult<T> | undefined;
    try {
      result = await runAttempt(req, url, stops);
      return result;
    } finally {
      if (watched !== undefined) waitWatch?.end(watched);
      pacer.finish(
        ticket,
        result?.status === 429 && result.kind === 'retryable'
          ? { rateLimited: true, retryAfterMs: result.retryAfterMs }
          : { rateLimited: false, answered: result !== undefined && result.status !== undefined },
      );
    }
  }

  async function runAttempt<T>(
    req: GetJsonRequest<T>,
    url: string,
    stops: readonly AbortSignal[],
  ): Promise<AttemptResult<T>> {
    const [{ request }, dispatcher] = await Promise.all([loadUndici(), agentOf()]);
    const attemptSignal = createAttemptSignal(stops, options.timeoutMs);
    let status: number | undefined;
    let responseHeaders: IncomingHttpHeaders;
    let body: string;
    // Only the transport is inside the try: a failure to interpret a complete answer is not a
    // network error and must not be retried as one.
    try {
      const response = await request(url, {
        method: 'GET',
        headers: req.headers ? { ...req.headers, ...headers } : headers,
        dispatcher,
        signal: attemptSignal.signal,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      });
      status = response.statusCode;
      responseHeaders = response.headers;
      body = await decodedBody(response.headers['content-encoding'], Buffer.from(await response.body.arrayBuffer()));
    } catch (error) {
      const stopped = stoppedError(req);
      if (stopped) throw stopped;
      const failure = describeTransportFailure(error, {
        timedOut: attemptSignal.timedOut,
        timeoutMs: options.timeoutMs,
        secret: options.apiKey,
        baseUrl: options.baseUrl,
        proxy: options.network.proxy,
      });
      return failure.kind === 'final' ? { ...failure, status } : { kind: 'retryable', failure, status };
    } finally {
      attemptSignal.dispose();
    }
    return await interpretResponse(req, url, status, responseHeaders, body);
  }

  async function interpretResponse<T>(
    req: GetJsonRequest<T>,
    url: string,
    status: number,
    responseHeaders: IncomingHttpHeaders,
    body: string,
  ): Promise<AttemptResult<T>> {
    if (status >= 200 && status <= 299) {
      const checked = await checkJsonBody(req.check, status, responseHeaders, body, req.onBody);
      if (checked.ok) return { kind: 'answer', value: checked.value, status, headers: responseHeaders };
      return {
        kind: 'retryable',
        status,
        failure: {
          kind: 'malformed',
          status,
          problem: redact(checked.problem, options.apiKey),
          hint: checked.hint,
          cut: checked.cut,
        },
      };
    }
    const error = errorFromResponse({
      endpoint: req.endpoint,
      status,
      bodyText: body,
      secret: options.apiKey,
      location: resolveLocation(responseHeaders.location, url),
    });
    if (!isRetryableStatus(status)) return { kind: 'final', error, status };
    return {
      kind: 'retryable',
      status,
      failure: { kind: 'status', error },
      retryAfterMs: requestedWaitMs(responseHeaders['retry-after'], error.details),
    };
  }

  async function close(): Promise<void> {
    if (lifetime.signal.aborted) return;
    lifetime.abort();
    stopAll.dispose();
    // A shared pacer outlives this client: its waiters for this client left when `lifetime` was aborted.
    if (options.pacer === undefined)
      pacer.close(new Error('the API client was closed while a request waited its turn'));
    waitWatch?.close();
    if (agent !== undefined) await (await agent).close();
  }

  return { getJson, close };
}

/**
 * Whether an attempt may have been charged though no usable answer came back: a 2xx whose body was
 * cut, undecodable or unreadable, or a transport failure after the request could have been sent (not
 * a refused connection, a failed name lookup, a connect timeout or a TLS failure, which are all final
 * or happen before anything is sent).
 */
function answerLost(result: AttemptResult<unknown>): boolean {
  if (result.kind === 'answer') return false;
  if (result.status !== undefined) return result.status >= 200 && result.status <= 299;
  if (result.kind === 'final') return false;
  const { failure } = result;
  if (failure.kind === 'timeout') return failure.words !== 'no connection';
  return failure.kind === 'network' && failure.failureClass === 'connection';
}

/** An attempt's failure in the words of the "(last: ...)" of the error it may end in. */
function describeForEvent(failure: RetryableFailure, endpoint: string): string {
  return failure.kind === 'malformed'
    ? `the service answered ${endpoint} with ${failure.problem}`
    : describeFailure(failure);
}

// ---------------------------------------------------------------------------------------------
// URL

/**
 * baseUrl + `/api/v1` + endpoint + query, each key and value percent-encoded (%20, not +); empty values are left out.
 */
export function buildUrl(baseUrl: URL, endpoint: string, params: GetJsonRequest<unknown>['params']): string {
  const basePath = baseUrl.pathname.replace(/\/+$/, '');
  // Tolerate a base URL given with the API prefix already on it.
  const prefix = basePath.endsWith('/api/v1') ? basePath : `${basePath}/api/v1`;
  const query = params
    .filter((pair): pair is readonly [string, string] => pair[1] !== undefined && pair[1] !== '')
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
