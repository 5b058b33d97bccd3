/**
 * One attempt of a request: send it, read the answer within its cap, and say what it is worth: an
 * answer, a final error, or a failure retry.ts may ask again after. Whether and when to ask again is
 * the loop's (request-loop.ts), by retry.ts's decision.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { answerText, errorAnswerText } from './answer-text.js';
import { checkJsonBody, jsonBoundsOf } from './body-check.js';
import { AnswerRefusedError, readAnswerBody, UndecodableBodyError } from './content-encoding.js';
import { createDispatcher, type NetworkOptions } from './dispatcher.js';
import type { RequestError } from './errors.js';
import { answerRefusedError, describeFailure, errorFromResponse, type LastFailure } from './error-responses.js';
import { isRetryableStatus, requestedWaitMs } from './retry.js';
import type { SchemaCheck } from './schemas.js';
import { createAttemptSignal } from './stop-signals.js';
import { describeTransportFailure } from './transport-errors.js';
import { redact } from '../util/redact.js';

/** What an attempt needs of its request. */
export interface AttemptRequest<T> {
  /** The path after `/api/v1`, e.g. `/companies`. */
  endpoint: string;
  check: (json: unknown) => SchemaCheck<T>;
  /**
   * Sees a 2xx body as soon as it is parsed, before `check` runs; the check then waits a turn of
   * the event loop, so a request this starts (the next page) is on the wire while the body is checked.
   */
  onBody?: ((json: unknown) => void) | undefined;
  /** Extra request headers (Idempotency-Key). Never the Authorization header. */
  headers?: Readonly<Record<string, string>> | undefined;
  /** Sent as a POST with this JSON text (`verify-method POST`); a GET otherwise. */
  jsonBody?: string | undefined;
}

/** The settings every attempt of a client shares. */
export interface AttemptSettings {
  baseUrl: URL;
  apiKey: string;
  timeoutMs: number;
  connections: number;
  maxAnswerBytes: number;
  network: Pick<NetworkOptions, 'proxy' | 'ca' | 'connectTimeoutMs' | 'dispatcher'>;
  userAgent: string;
  /** `host:port` of the service, as errors name it. */
  service: string;
}

export type RetryableFailure =
  | LastFailure
  /** `cut`: the body ended early (empty, or JSON that stops mid-way), not a complete body of the wrong shape. */
  | { kind: 'malformed'; problem: string; status: number; hint?: string | undefined; cut?: boolean };

export type AttemptResult<T> =
  | { kind: 'answer'; value: T; status: number; headers: IncomingHttpHeaders }
  | { kind: 'final'; error: RequestError | Error; status?: number | undefined }
  | { kind: 'retryable'; failure: RetryableFailure; status?: number | undefined; retryAfterMs?: number | undefined };

export interface AttemptRunner {
  /**
   * One attempt at `url`, stopped by any of `stops`. `stopped` says why it was stopped from outside;
   * that error is thrown rather than reported as a transport failure.
   */
  run<T>(
    req: AttemptRequest<T>,
    url: string,
    stops: readonly AbortSignal[],
    stopped: () => Error | undefined,
  ): Promise<AttemptResult<T>>;
  /** Closes the connection pool, if one was opened. */
  close(): Promise<void>;
}

/**
 * undici is loaded with the first request, not with this module, so a command that only needs the API's
 * defaults, checks or errors (config, a refused flag) starts without it.
 */
let undici: Promise<typeof import('undici')> | undefined;
// A CommonJS package imported at run time: Node gives its exports as named ones and as `default`,
// the bundle as `default` only.
const loadUndici = () =>
  (undici ??= import('undici').then((module) => (module as unknown as { default?: typeof module }).default ?? module));

export function createAttemptRunner(settings: AttemptSettings): AttemptRunner {
  const given = settings.network.dispatcher;
  let agent: Promise<Dispatcher> | undefined = given === undefined ? undefined : Promise.resolve(given);
  const agentOf = () =>
    (agent ??= loadUndici().then((undici) =>
      createDispatcher(undici, {
        ...settings.network,
        readTimeoutMs: settings.timeoutMs,
        connections: settings.connections,
      }),
    ));
  const headers = {
    authorization: `Bearer ${settings.apiKey}`,
    accept: 'application/json',
    'accept-encoding': 'gzip',
    'user-agent': settings.userAgent,
  };
  return {
    run: async (req, url, stops, stopped) => {
      const [{ request }, dispatcher] = await Promise.all([loadUndici(), agentOf()]);
      const send = (signal: AbortSignal) =>
        request(url, {
          method: req.jsonBody === undefined ? 'GET' : 'POST',
          headers: {
            ...req.headers,
            ...headers,
            ...(req.jsonBody === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: req.jsonBody,
          dispatcher,
          signal,
          // Within the cap the body never pushes back on the parser (content-encoding.ts fromWire says why).
          highWaterMark: settings.maxAnswerBytes,
          headersTimeout: settings.timeoutMs,
          bodyTimeout: settings.timeoutMs,
        });
      return await runAttempt(settings, req, url, { send, stops, stopped });
    },
    close: async () => {
      // A transport given by the caller is the caller's to close.
      if (agent !== undefined && given === undefined) await (await agent).close();
    },
  };
}

interface AttemptWire {
  send: (signal: AbortSignal) => Promise<Dispatcher.ResponseData>;
  stops: readonly AbortSignal[];
  stopped: () => Error | undefined;
}

async function runAttempt<T>(
  settings: AttemptSettings,
  req: AttemptRequest<T>,
  url: string,
  wire: AttemptWire,
): Promise<AttemptResult<T>> {
  const attemptSignal = createAttemptSignal(wire.stops, settings.timeoutMs);
  let status: number | undefined;
  let responseHeaders: IncomingHttpHeaders;
  let body: Buffer[];
  // Only the transport is inside the try: a failure to interpret a complete answer is not a
  // network error and must not be retried as one.
  try {
    const response = await wire.send(attemptSignal.signal);
    status = response.statusCode;
    responseHeaders = response.headers;
    body = await readAnswerBody(response.body, response.headers['content-encoding'], {
      capBytes: settings.maxAnswerBytes,
      signal: attemptSignal.signal,
      where: settings.service,
    });
  } catch (error) {
    const stopped = wire.stopped();
    if (stopped) throw stopped;
    return transportFailure(settings, req.endpoint, error, { status, timedOut: attemptSignal.timedOut });
  } finally {
    attemptSignal.dispose();
  }
  return await interpretResponse(settings, req, url, { status, headers: responseHeaders, body });
}

/** An attempt whose answer did not arrive whole: refused by its size, a transport failure, or a lost 2xx body. */
function transportFailure(
  settings: AttemptSettings,
  endpoint: string,
  error: unknown,
  seen: { status: number | undefined; timedOut: boolean },
): AttemptResult<never> {
  const { status } = seen;
  if (error instanceof AnswerRefusedError)
    return { kind: 'final', error: answerRefusedError(endpoint, 1, error, settings.maxAnswerBytes, status), status };
  const failure = describeTransportFailure(error, {
    timedOut: seen.timedOut,
    timeoutMs: settings.timeoutMs,
    connectTimeoutMs: settings.network.connectTimeoutMs,
    secret: settings.apiKey,
    baseUrl: settings.baseUrl,
    proxy: settings.network.proxy,
  });
  if (failure.kind === 'final') return { ...failure, status };
  if (status !== undefined && status >= 200 && status <= 299)
    return { kind: 'retryable', failure: lostAnswer(status, settings.service, error, failure), status };
  return { kind: 'retryable', failure, status };
}

/** A complete answer: a checked 2xx value, a malformed 2xx, or the error its status means. */
async function interpretResponse<T>(
  settings: AttemptSettings,
  req: AttemptRequest<T>,
  url: string,
  answer: { status: number; headers: IncomingHttpHeaders; body: Buffer[] },
): Promise<AttemptResult<T>> {
  const { status, headers } = answer;
  if (status >= 200 && status <= 299) {
    const text = answerText(answer.body, headers);
    const checked = text.ok
      ? await checkJsonBody(req.check, status, headers, text.text, jsonBoundsOf(settings.maxAnswerBytes), req.onBody)
      : { ok: false as const, problem: `${text.problem} (status ${status})`, hint: undefined };
    if (checked.ok) return { kind: 'answer', value: checked.value, status, headers };
    return {
      kind: 'retryable',
      status,
      failure: {
        kind: 'malformed',
        status,
        problem: redact(checked.problem, settings.apiKey),
        hint: checked.hint,
        cut: checked.cut,
      },
    };
  }
  const error = errorFromResponse({
    endpoint: req.endpoint,
    status,
    bodyText: errorAnswerText(answer.body, headers),
    secret: settings.apiKey,
    location: resolveLocation(headers.location, url),
  });
  if (!isRetryableStatus(status)) return { kind: 'final', error, status };
  return {
    kind: 'retryable',
    status,
    failure: { kind: 'status', error },
    retryAfterMs: requestedWaitMs(headers['retry-after'], error.details),
  };
}

/** A 2xx whose body was cut, broken or stopped coming: the answer was lost, the connection had not failed. */
function lostAnswer(status: number, where: string, error: unknown, failure: LastFailure): RetryableFailure {
  const why = error instanceof UndecodableBodyError ? error.message : describeFailure(failure);
  return { kind: 'lost', status, where, description: `its body did not (${why})`, cause: error };
}

/**
 * Whether an attempt may have been charged though no usable answer came back: a 2xx whose body was
 * cut, undecodable or unreadable, or a transport failure after the request could have been sent (not
 * a refused connection, a failed name lookup, a connect timeout or a TLS failure, which are all final
 * or happen before anything is sent).
 */
export function answerLost(result: AttemptResult<unknown>): boolean {
  if (result.kind === 'answer') return false;
  if (result.status !== undefined) return result.status >= 200 && result.status <= 299;
  if (result.kind === 'final') return false;
  const { failure } = result;
  if (failure.kind === 'timeout') return failure.words !== 'no connection';
  return failure.kind === 'network' && failure.failureClass === 'connection';
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
