/** One JSON GET (or POST), asked again as retry.ts decides; knows no endpoint's meaning. */
import { setMaxListeners } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { answerText, errorAnswerText } from './answer-text.js';
import { checkJsonBody, jsonBoundsOf } from './body-check.js';
import { AnswerRefusedError, readAnswerBody, UndecodableBodyError } from './content-encoding.js';
import { createDispatcher, type NetworkOptions } from './dispatcher.js';
import { AbortedError, RequestError } from './errors.js';
import {
  answerRefusedError,
  describeFailure,
  errorFromResponse,
  malformedAnswerError,
  rateLimitedError,
  retriesExhaustedError,
  retryAfterTooLongError,
  type LastFailure,
} from './error-responses.js';
import { RequestPacer, type PacerTicket } from './pacer.js';
import { decideRetry, isRetryableStatus, requestedWaitMs, type RetryDecision, type RetryPolicy } from './retry.js';
import type { SchemaCheck } from './schemas.js';
import { describeTransportFailure, hostAndPort } from './transport-errors.js';
import { WaitWatch, type WaitNotice } from './wait-watch.js';
import { redact } from '../util/redact.js';

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
  /** Per attempt, covering headers and the whole body (undici's body timeout alone is an idle timer). */
  timeoutMs: number;
  policy: RetryPolicy;
  connections: number;
  /** Decoded bytes an answer may have (content-encoding.ts): over it, the request fails at once. */
  maxAnswerBytes: number;
  network: Pick<NetworkOptions, 'proxy' | 'ca' | 'connectTimeoutMs' | 'dispatcher'>;
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
  /** The path from the service root instead of `/api/v1` + endpoint (`verify-path`). */
  path?: string | undefined;
  check: (json: unknown) => SchemaCheck<T>;
  /** Sees a parsed 2xx body before `check`, so the next page is on the wire while this one is checked. */
  onBody?: ((json: unknown) => void) | undefined;
  /** Extra request headers (Idempotency-Key). Never the Authorization header. */
  headers?: Readonly<Record<string, string>> | undefined;
  /** Sent as a POST with this JSON text (`verify-method POST`); a GET otherwise. */
  jsonBody?: string | undefined;
  /** The service counts a unit per answered call: never ask again after a complete 2xx. */
  chargedPerAnswer?: boolean;
  /** A paid call: told of each answer lost after the request went out, and asked before each retry after one. */
  paid?: PaidCallWatch | undefined;
  /** Withdraws this request and any wait before its next attempt: a listing closed with a page ahead in flight. */
  signal?: AbortSignal | undefined;
}

/** The budget's view of a paid call: an answer lost after sending may have been charged, so retries ask first. */
export interface PaidCallWatch {
  answerLost(): void;
  /** False ends the request with the lost attempt's error; a promise lets the caller commit the retry first. */
  mayRetry(): boolean | Promise<boolean>;
  /** Asked just before each attempt goes out: a throw or rejection stops it unsent. */
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

/** `cut`: the body ended early (empty, or JSON that stops mid-way), not a complete body of the wrong shape. */
type RetryableFailure =
  LastFailure | { kind: 'malformed'; problem: string; status: number; hint?: string | undefined; cut?: boolean };

type AttemptResult<T> =
  | { kind: 'answer'; value: T; status: number; headers: IncomingHttpHeaders }
  | { kind: 'final'; error: RequestError | Error; status?: number | undefined }
  | { kind: 'retryable'; failure: RetryableFailure; status?: number | undefined; retryAfterMs?: number | undefined };

/** What every request of one client shares: its settings, its pool, its pace and its stop. */
interface ClientState {
  options: HttpClientOptions;
  /** `host:port` of the service, as errors name it. */
  service: string;
  /** The connection pool, opened with the first request. */
  pool: () => Promise<Dispatcher>;
  pacer: RequestPacer;
  waitWatch: WaitWatch | undefined;
  /** Aborted by close(), so no retry loop outlives the client. */
  lifetime: AbortController;
  /** The caller's signal and close(), linked once: every attempt and wait listens to this one. */
  stopAll: AbortSignal;
}

/** A request's own view: its URL and what stops it. */
interface RequestScope<T> {
  req: GetJsonRequest<T>;
  url: string;
  stops: readonly AbortSignal[];
  stopped: () => Error | undefined;
}

// undici loads with the first request, so a command that only needs the API's defaults starts without
// it. A CommonJS package: Node gives its exports as named ones and as `default`, the bundle as `default` only.
let undici: Promise<typeof import('undici')> | undefined;
const loadUndici = () =>
  (undici ??= import('undici').then((module) => (module as unknown as { default?: typeof module }).default ?? module));

export function createHttpClient(options: HttpClientOptions): HttpClient {
  const service = hostAndPort(options.baseUrl);
  const lifetime = new AbortController();
  // One listener on the caller's signal for the whole client, however many requests run at once.
  const stopAll = linkSignals([options.signal, lifetime.signal].filter((signal) => signal !== undefined));
  setMaxListeners(0, stopAll.controller.signal);
  const given = options.network.dispatcher;
  let pool: Promise<Dispatcher> | undefined = given && Promise.resolve(given);
  const state: ClientState = {
    options,
    service,
    pool: () =>
      (pool ??= loadUndici().then((loaded) =>
        createDispatcher(loaded, {
          ...options.network,
          readTimeoutMs: options.timeoutMs,
          connections: options.connections,
        }),
      )),
    pacer: options.pacer ?? new RequestPacer({ maxInFlight: options.connections }),
    waitWatch: options.onWaiting ? new WaitWatch(service, options.onWaiting) : undefined,
    lifetime,
    stopAll: stopAll.controller.signal,
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
      // A transport given by the caller is the caller's to close.
      if (pool !== undefined && given === undefined) await (await pool).close();
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
  const scope: RequestScope<T> = {
    req,
    url,
    stops: req.signal === undefined ? [state.stopAll] : [state.stopAll, req.signal],
    stopped: () => stoppedError(state, req),
  };
  const counts = { malformedRetries: 0, answersLost: 0, rateLimited: 0 };

  for (let attempt = 1; ; attempt++) {
    const stop = scope.stopped();
    if (stop) throw stop;
    const ticket = await pacer.admit(scope.stops, scope.stopped);
    const startedAt = performance.now();
    const result = await runPacedAttempt(state, scope, ticket);
    const event: RequestEvent = {
      method: req.jsonBody === undefined ? 'GET' : 'POST',
      // The key travels in a header, but a service may echo it into a cursor the next URL carries.
      url: redact(url, options.apiKey),
      endpoint: req.endpoint,
      attempt,
      durationMs: Math.round(performance.now() - startedAt),
      status: result.status,
    };
    if (result.kind === 'answer') {
      options.onRequest?.(event);
      const { value, status, headers } = result;
      return { value, status, headers, attempts: attempt, answersLost: counts.answersLost };
    }
    const lost = answerLost(result);
    if (lost) req.paid?.answerLost();
    if (result.kind === 'final') {
      options.onRequest?.({ ...event, error: result.error.message });
      throw result.error;
    }
    const { failure } = result;
    const outcome = await decideNext(state, req, { result, attempt, lost, counts });
    options.onRequest?.({
      ...event,
      error:
        failure.kind === 'malformed'
          ? `the service answered ${req.endpoint} with ${failure.problem}`
          : describeFailure(failure),
      retryInMs: !outcome.retry ? undefined : outcome.paced ? Math.round(pacer.pausedForMs()) : outcome.delayMs,
      ...(failure.kind === 'lost' ? { answerLost: true } : {}),
    });
    if (!outcome.retry) throw finalError(state, outcome, failure, req.endpoint, attempt, counts.answersLost);
    // A 429's wait is the pacer's, for every request at once.
    if (outcome.paced) continue;
    if (failure.kind === 'malformed') counts.malformedRetries++;
    await waitUnlessStopped(outcome.delayMs, scope);
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
  scope: RequestScope<T>,
  ticket: PacerTicket,
): Promise<AttemptResult<T>> {
  const watched = state.waitWatch?.start();
  let result: AttemptResult<T> | undefined;
  try {
    await scope.req.paid?.beforeSend?.();
    result = await runAttempt(state, scope);
    return result;
  } finally {
    if (watched !== undefined) state.waitWatch?.end(watched);
    state.pacer.finish(
      ticket,
      result?.status === 429 && result.kind === 'retryable'
        ? { rateLimited: true, retryAfterMs: result.retryAfterMs }
        : { rateLimited: false, answered: result?.status !== undefined },
    );
  }
}

/** Sends one attempt and reads its answer within the cap; the attempt's deadline covers headers and body. */
async function runAttempt<T>(
  state: ClientState,
  { req, url, stops, stopped }: RequestScope<T>,
): Promise<AttemptResult<T>> {
  const { options } = state;
  const [{ request }, dispatcher] = await Promise.all([loadUndici(), state.pool()]);
  const linked = linkSignals(stops);
  const deadline = new Error(`timed out after ${options.timeoutMs} ms`);
  const timer = setTimeout(() => linked.controller.abort(deadline), options.timeoutMs);
  const signal = linked.controller.signal;
  let status: number | undefined;
  let answer: { headers: IncomingHttpHeaders; body: Buffer[] };
  // Only the transport is inside the try: a complete answer misread is no network error to retry.
  try {
    const response = await request(url, {
      method: req.jsonBody === undefined ? 'GET' : 'POST',
      headers: {
        ...req.headers,
        authorization: `Bearer ${options.apiKey}`,
        accept: 'application/json',
        'accept-encoding': 'gzip',
        'user-agent': options.userAgent,
        ...(req.jsonBody === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: req.jsonBody,
      dispatcher,
      signal,
      // Within the cap the body never pushes back on the parser (content-encoding.ts fromWire says why).
      highWaterMark: options.maxAnswerBytes,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    status = response.statusCode;
    const body = await readAnswerBody(response.body, response.headers['content-encoding'], {
      capBytes: options.maxAnswerBytes,
      signal,
      where: state.service,
    });
    answer = { headers: response.headers, body };
  } catch (error) {
    const stop = stopped();
    if (stop) throw stop;
    return transportFailure(state, req.endpoint, error, { status, timedOut: signal.reason === deadline });
  } finally {
    clearTimeout(timer);
    linked.dispose();
  }
  return await interpretResponse(state, req, url, { status, ...answer });
}

/** An attempt whose answer did not arrive whole: refused by its size, a transport failure, or a lost 2xx body. */
function transportFailure(
  { options, service }: ClientState,
  endpoint: string,
  error: unknown,
  { status, timedOut }: { status: number | undefined; timedOut: boolean },
): AttemptResult<never> {
  if (error instanceof AnswerRefusedError)
    return { kind: 'final', error: answerRefusedError(endpoint, 1, error, options.maxAnswerBytes, status), status };
  const failure = describeTransportFailure(error, {
    timedOut,
    timeoutMs: options.timeoutMs,
    connectTimeoutMs: options.network.connectTimeoutMs,
    secret: options.apiKey,
    baseUrl: options.baseUrl,
    proxy: options.network.proxy,
  });
  if (failure.kind === 'final') return { ...failure, status };
  if (status === undefined || status < 200 || status > 299) return { kind: 'retryable', failure, status };
  // A 2xx whose body was cut, broken or stopped coming: the answer was lost, the connection had not failed.
  const why = error instanceof UndecodableBodyError ? error.message : describeFailure(failure);
  const description = `its body did not (${why})`;
  return { kind: 'retryable', failure: { kind: 'lost', status, where: service, description, cause: error }, status };
}

/** A complete answer: a checked 2xx value, a malformed 2xx, or the error its status means. */
async function interpretResponse<T>(
  { options }: ClientState,
  req: GetJsonRequest<T>,
  url: string,
  answer: { status: number; headers: IncomingHttpHeaders; body: Buffer[] },
): Promise<AttemptResult<T>> {
  const { status, headers } = answer;
  if (status >= 200 && status <= 299) {
    const text = answerText(answer.body, headers);
    const bounds = jsonBoundsOf(options.maxAnswerBytes);
    const checked = text.ok
      ? await checkJsonBody(req.check, status, headers, text.text, bounds, req.onBody)
      : { ok: false as const, problem: `${text.problem} (status ${status})`, hint: undefined };
    if (checked.ok) return { kind: 'answer', value: checked.value, status, headers };
    const { hint, cut } = checked;
    const problem = redact(checked.problem, options.apiKey);
    return { kind: 'retryable', status, failure: { kind: 'malformed', status, problem, hint, cut } };
  }
  const error = errorFromResponse({
    endpoint: req.endpoint,
    status,
    bodyText: errorAnswerText(answer.body, headers),
    secret: options.apiKey,
    location: resolveLocation(headers.location, url),
  });
  if (!isRetryableStatus(status)) return { kind: 'final', error, status };
  const retryAfterMs = requestedWaitMs(headers['retry-after'], error.details);
  return { kind: 'retryable', status, failure: { kind: 'status', error }, retryAfterMs };
}

/**
 * Whether an attempt may have been charged though no usable answer came back: a 2xx whose body was
 * cut, undecodable or unreadable, or a transport failure after the request could have been sent (not
 * a refused connection, a failed name lookup, a connect timeout or a TLS failure).
 */
function answerLost(result: AttemptResult<unknown>): boolean {
  if (result.kind === 'answer') return false;
  if (result.status !== undefined) return result.status >= 200 && result.status <= 299;
  if (result.kind === 'final') return false;
  const { failure } = result;
  if (failure.kind === 'timeout') return failure.words !== 'no connection';
  return failure.kind === 'network' && failure.failureClass === 'connection';
}

/** The error a request ends in when retry.ts says not to ask again. */
function finalError(
  { service, options }: ClientState,
  decision: Extract<RetryDecision, { retry: false }>,
  failure: RetryableFailure,
  endpoint: string,
  attempt: number,
  answersLost: number,
): Error {
  if (failure.kind === 'malformed')
    return malformedAnswerError(endpoint, attempt, failure.status, failure.problem, failure.hint, service);
  if (decision.why === 'retry-after-too-long' && failure.kind === 'status')
    return retryAfterTooLongError(endpoint, attempt, decision.retryAfterMs, options.policy.maxDelayMs, failure.error);
  if (decision.why === 'rate-limited' && failure.kind === 'status')
    return rateLimitedError(endpoint, attempt, service, failure.error);
  return retriesExhaustedError(endpoint, attempt, failure, service, answersLost);
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

/**
 * A signal that fires when any of the parents does; dispose() removes its listeners. By hand rather
 * than AbortSignal.any, so no listener is left on the long-lived signals after thousands of requests.
 */
function linkSignals(parents: readonly AbortSignal[]): { controller: AbortController; dispose(): void } {
  const controller = new AbortController();
  const onParentAbort = (): void => controller.abort(new Error('stopped'));
  for (const parent of parents) {
    if (parent.aborted) onParentAbort();
    else parent.addEventListener('abort', onParentAbort, { once: true });
  }
  return {
    controller,
    dispose: () => {
      for (const parent of parents) parent.removeEventListener('abort', onParentAbort);
    },
  };
}

/** Sleeps between attempts; any stop signal (the caller's, close(), the request's) cuts the wait short. */
async function waitUnlessStopped(ms: number, { stops, stopped }: RequestScope<unknown>): Promise<void> {
  const linked = linkSignals(stops);
  try {
    await sleep(ms, undefined, { signal: linked.controller.signal });
  } catch (error) {
    throw stopped() ?? error;
  } finally {
    linked.dispose();
  }
}

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
  const query = params
    .filter((pair): pair is readonly [string, string] => pair[1] !== undefined && pair[1] !== '')
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
    .join('&');
  const where = path !== undefined ? `${prefix.replace(/\/api\/v1$/, '')}${path}` : `${prefix}${endpoint}`;
  return `${baseUrl.origin}${where}${query === '' ? '' : `?${query}`}`;
}
