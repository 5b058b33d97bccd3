/**
 * One GET with JSON out, asked again as retry.ts decides. Knows nothing of endpoints' meaning:
 * the caller gives the path, the query and a schema check; this file gives back a checked value
 * or a RequestError. It only loops: what a body is worth is body-check.ts's call, what a transport
 * failure means is transport-errors.ts's, and whether and when to ask again is retry.ts's.
 */
import { setMaxListeners } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import {
  answerLost,
  createAttemptRunner,
  type AttemptRequest,
  type AttemptResult,
  type AttemptRunner,
  type RetryableFailure,
} from './attempt.js';
import type { NetworkOptions } from './dispatcher.js';
import { AbortedError, RequestError } from './errors.js';
import {
  describeFailure,
  malformedAnswerError,
  rateLimitedError,
  retriesExhaustedError,
  retryAfterTooLongError,
} from './error-responses.js';
import { redact } from '../util/redact.js';
import { decideRetry, type RetryDecision, type RetryPolicy } from './retry.js';
import { RequestPacer, type PacerTicket } from './pacer.js';
import { linkSignals, waitUnlessStopped } from './stop-signals.js';
import { hostAndPort } from './transport-errors.js';
import { WaitWatch, type WaitNotice } from './wait-watch.js';

/** Reported once per attempt, after it ends: for a request log and progress. Never carries the key. */
export interface RequestEvent {
  method: 'GET' | 'POST';
  /** The full request URL, with the key removed should the service have echoed it into a cursor. */
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
  /** A 2xx arrived but its body did not: the request reached the service and may have been charged. */
  answerLost?: boolean | undefined;
}

export interface HttpClientOptions {
  /** Already checked by the client: http(s), no credentials, plain http only on loopback. */
  baseUrl: URL;
  apiKey: string;
  timeoutMs: number;
  policy: RetryPolicy;
  connections: number;
  /** Decoded bytes an answer may have (content-encoding.ts): over it, the request fails at once. */
  maxAnswerBytes: number;
  /** Proxy, trusted certificates and the connect timeout. */
  network: Pick<NetworkOptions, 'proxy' | 'ca' | 'connectTimeoutMs' | 'dispatcher'>;
  userAgent: string;
  signal?: AbortSignal | undefined;
  onRequest?: ((event: RequestEvent) => void) | undefined;
  /** Told while a request has waited a while for its answer, and once more (undefined) when none waits. */
  onWaiting?: ((notice: WaitNotice | undefined) => void) | undefined;
  /** A pacer shared with the other clients of the same service and key; default: one of this client's own. */
  pacer?: RequestPacer | undefined;
}

export interface GetJsonRequest<T> extends AttemptRequest<T> {
  /** Query parameters in order; pairs with an undefined or empty value are left out. */
  params: ReadonlyArray<readonly [string, string | undefined]>;
  /** The path from the service root instead of `/api/v1` + endpoint (`verify-path`). */
  path?: string | undefined;
  /** The service counts a unit per answered call: never ask again after a complete 2xx. */
  chargedPerAnswer?: boolean;
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
  /**
   * False: the request ends with the lost attempt's error instead of asking again. A promise when the
   * caller records the retry somewhere durable first (a commit): the retry waits for it.
   */
  mayRetry(): boolean | Promise<boolean>;
  /**
   * Asked at the last moment before each attempt goes out (after any wait for its turn): a throw (or a
   * rejection) stops it unsent.
   */
  beforeSend?(): void | Promise<void>;
}

export interface JsonAnswer<T> {
  value: T;
  status: number;
  headers: IncomingHttpHeaders;
  attempts: number;
  /** Earlier attempts whose 2xx answer was lost: each reached the service and may have been charged. */
  answersLost: number;
}

export interface HttpClient {
  getJson<T>(req: GetJsonRequest<T>): Promise<JsonAnswer<T>>;
  close(): Promise<void>;
}

/** What every request of one client shares: its settings, its attempts, its pace and its stop. */
interface ClientState {
  options: HttpClientOptions;
  /** `host:port` of the service, as errors name it. */
  service: string;
  attempts: AttemptRunner;
  pacer: RequestPacer;
  waitWatch: WaitWatch | undefined;
  /** Aborted by close(), so no retry loop outlives the client. */
  lifetime: AbortController;
  /** The caller's signal and close(), linked once: every attempt and wait listens to these. */
  stopSignals: readonly AbortSignal[];
}

export function createHttpClient(options: HttpClientOptions): HttpClient {
  const service = hostAndPort(options.baseUrl);
  const lifetime = new AbortController();
  // One listener on the caller's signal for the whole client, however many requests run at once;
  // every attempt and wait listens to this one, whose listeners come and go with them.
  const stopAll = linkSignals(
    [options.signal, lifetime.signal].filter((signal): signal is AbortSignal => signal !== undefined),
  );
  setMaxListeners(0, stopAll.controller.signal);
  const state: ClientState = {
    options,
    service,
    attempts: createAttemptRunner({ ...options, service }),
    pacer: options.pacer ?? new RequestPacer({ maxInFlight: options.connections }),
    waitWatch: options.onWaiting ? new WaitWatch(service, options.onWaiting) : undefined,
    lifetime,
    stopSignals: [stopAll.controller.signal],
  };
  return {
    getJson: (req) => requestJson(state, req).catch((error: unknown) => Promise.reject(withHost(error, service))),
    close: async () => {
      if (lifetime.signal.aborted) return;
      lifetime.abort();
      stopAll.dispose();
      // A shared pacer outlives this client: its waiters for this client left when `lifetime` was aborted.
      if (options.pacer === undefined)
        state.pacer.close(new Error('the API client was closed while a request waited its turn'));
      state.waitWatch?.close();
      await state.attempts.close();
    },
  };
}

/** Every error a request ends in names the service it asked, as a fact: `host:port`. */
function withHost(error: unknown, host: string): unknown {
  if (error instanceof RequestError && error.host === undefined) (error as { host?: string }).host = host;
  return error;
}

/** Why an attempt or a wait was stopped from outside: the caller's signal, close(), or the request withdrawn. */
function stoppedError(state: ClientState, req: GetJsonRequest<unknown>): Error | undefined {
  if (state.options.signal?.aborted) return new AbortedError(req.endpoint);
  if (state.lifetime.signal.aborted) return new Error('the API client was closed while a request was in flight');
  if (req.signal?.aborted) return new Error(`a request to ${req.endpoint} was withdrawn: its listing was closed`);
  return undefined;
}

/** Attempts until one answers or retry.ts (or a paid call's budget) says to stop. */
async function requestJson<T>(state: ClientState, req: GetJsonRequest<T>): Promise<JsonAnswer<T>> {
  const { options, pacer } = state;
  if (state.lifetime.signal.aborted) throw new Error('the API client was used after close()');
  const url = buildUrl(options.baseUrl, req.endpoint, req.params, req.path);
  // The key travels in a header, but a service may echo it into a cursor the next URL carries.
  const shownUrl = redact(url, options.apiKey);
  const stops = req.signal === undefined ? state.stopSignals : [...state.stopSignals, req.signal];
  const stopped = () => stoppedError(state, req);
  const counts = { malformedRetries: 0, answersLost: 0, rateLimited: 0 };

  for (let attempt = 1; ; attempt++) {
    const stop = stopped();
    if (stop) throw stop;
    const ticket = await pacer.admit(stops, stopped);
    const startedAt = performance.now();
    const result = await runPacedAttempt(state, { req, url, stops, stopped }, ticket);
    const base = {
      method: req.jsonBody === undefined ? ('GET' as const) : ('POST' as const),
      url: shownUrl,
      endpoint: req.endpoint,
      attempt,
      durationMs: Math.round(performance.now() - startedAt),
      status: result.status,
    };

    if (result.kind === 'answer') {
      options.onRequest?.(base);
      const { value, status, headers } = result;
      return { value, status, headers, attempts: attempt, answersLost: counts.answersLost };
    }
    const lost = answerLost(result);
    if (lost) req.paid?.answerLost();
    if (result.kind === 'final') {
      options.onRequest?.({ ...base, error: result.error.message });
      throw result.error;
    }

    const { failure } = result;
    const outcome = await decideNext(state, req, { result, attempt, lost, counts });
    options.onRequest?.({
      ...base,
      error: describeForEvent(failure, req.endpoint),
      retryInMs: !outcome.retry ? undefined : outcome.paced ? Math.round(pacer.pausedForMs()) : outcome.delayMs,
      ...(failure.kind === 'lost' ? { answerLost: true } : {}),
    });
    if (!outcome.retry) {
      const facts = { service: state.service, maxDelayMs: options.policy.maxDelayMs, answersLost: counts.answersLost };
      throw finalError(outcome, failure, req.endpoint, attempt, facts);
    }
    // A 429's wait is the pacer's, for every request at once.
    if (outcome.paced) continue;
    if (failure.kind === 'malformed') counts.malformedRetries++;
    await waitUnlessStopped(outcome.delayMs, stops, stopped);
  }
}

/** retry.ts's decision on a failed attempt, and a paid call's budget's say on a retry after a lost answer. */
async function decideNext(
  state: ClientState,
  req: GetJsonRequest<unknown>,
  seen: {
    result: Extract<AttemptResult<unknown>, { kind: 'retryable' }>;
    attempt: number;
    lost: boolean;
    counts: { malformedRetries: number; answersLost: number; rateLimited: number };
  },
): Promise<RetryDecision> {
  const { result, lost, counts } = seen;
  const { failure } = result;
  if (failure.kind === 'lost') counts.answersLost++;
  const rateLimitedNow = result.status === 429 && failure.kind === 'status';
  if (rateLimitedNow) counts.rateLimited++;
  const decision = decideRetry(
    {
      attempt: seen.attempt,
      rateLimited: rateLimitedNow,
      rateLimitedAttempts: counts.rateLimited,
      retryAfterMs: result.retryAfterMs,
      // A paid call's cut body is a lost answer, asked again (same Idempotency-Key) as a reset is.
      malformed: failure.kind === 'malformed' && !(lost && req.paid !== undefined && failure.cut),
      malformedRetries: counts.malformedRetries,
      chargedPerAnswer: req.chargedPerAnswer ?? false,
    },
    state.options.policy,
  );
  // Asked only when a retry would be sent: a paid call's caller reserves its unit on a yes.
  const budgetRefused = decision.retry && lost && req.paid !== undefined && !(await req.paid.mayRetry());
  return budgetRefused ? { retry: false, why: 'exhausted' } : decision;
}

/** One attempt, admitted by the pacer and reported back to it; watched while it waits for an answer. */
async function runPacedAttempt<T>(
  state: ClientState,
  attempt: {
    req: GetJsonRequest<T>;
    url: string;
    stops: readonly AbortSignal[];
    stopped: () => Error | undefined;
  },
  ticket: PacerTicket,
): Promise<AttemptResult<T>> {
  const watched = state.waitWatch?.start();
  let result: AttemptResult<T> | undefined;
  try {
    await attempt.req.paid?.beforeSend?.();
    result = await state.attempts.run(attempt.req, attempt.url, attempt.stops, attempt.stopped);
    return result;
  } finally {
    if (watched !== undefined) state.waitWatch?.end(watched);
    state.pacer.finish(
      ticket,
      result?.status === 429 && result.kind === 'retryable'
        ? { rateLimited: true, retryAfterMs: result.retryAfterMs }
        : { rateLimited: false, answered: result !== undefined && result.status !== undefined },
    );
  }
}

/** The error a request ends in when retry.ts says not to ask again. */
function finalError(
  decision: Extract<RetryDecision, { retry: false }>,
  failure: RetryableFailure,
  endpoint: string,
  attempt: number,
  facts: { service: string; maxDelayMs: number; answersLost: number },
): Error {
  if (failure.kind === 'malformed')
    return malformedAnswerError(endpoint, attempt, failure.status, failure.problem, failure.hint, facts.service);
  if (decision.why === 'retry-after-too-long' && failure.kind === 'status')
    return retryAfterTooLongError(endpoint, attempt, decision.retryAfterMs, facts.maxDelayMs, failure.error);
  if (decision.why === 'rate-limited' && failure.kind === 'status')
    return rateLimitedError(endpoint, attempt, facts.service, failure.error);
  return retriesExhaustedError(endpoint, attempt, failure, facts.service, facts.answersLost);
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
export function buildUrl(
  baseUrl: URL,
  endpoint: string,
  params: GetJsonRequest<unknown>['params'],
  path?: string,
): string {
  const basePath = baseUrl.pathname.replace(/\/+$/, '');
  // Tolerate a base URL given with the API prefix already on it.
  const prefix = basePath.endsWith('/api/v1') ? basePath : `${basePath}/api/v1`;
  if (path !== undefined) return `${baseUrl.origin}${prefix.replace(/\/api\/v1$/, '')}${path}${queryOf(params)}`;
  return `${baseUrl.origin}${prefix}${endpoint}${queryOf(params)}`;
}

function queryOf(params: GetJsonRequest<unknown>['params']): string {
  const query = params
    .filter((pair): pair is readonly [string, string] => pair[1] !== undefined && pair[1] !== '')
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
    .join('&');
  return query === '' ? '' : `?${query}`;
}
