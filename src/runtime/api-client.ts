import {
  CLIENT_DEFAULTS,
  createClient,
  type ClientOptions,
  RequestPacer,
  type ProspectClient,
  type RequestEvent,
  type WaitNotice,
} from '../api/index.js';
import type { Connection } from './connection.js';
import type { RunContext } from './context.js';

/**
 * One pacer per connection: every client of a run (the listing's and the paid calls') shares it, so
 * the service's rate limit sees one polite client, not one per kind of call (issue 27).
 */
const pacers = new WeakMap<Connection, RequestPacer>();

function pacerOf(connection: Connection): RequestPacer {
  let pacer = pacers.get(connection);
  if (pacer === undefined) {
    pacer = new RequestPacer({ maxInFlight: CLIENT_DEFAULTS.connections });
    pacers.set(connection, pacer);
  }
  return pacer;
}

/** The one place the CLI builds its client: debug logging, cancellation and the shared pacer are wired here. */
export function createApiClient(
  ctx: RunContext,
  connection: Connection,
  transport: Pick<ClientOptions, 'dispatcher'> = {},
): ProspectClient {
  const client = createClient({
    ...transport,
    baseUrl: connection.baseUrl,
    apiKey: connection.apiKey,
    signal: ctx.signal,
    pageSize: ctx.global.pageSize,
    timeoutMs: ctx.global.timeout !== undefined ? ctx.global.timeout * 1000 : undefined,
    maxRetries: ctx.global.maxRetries,
    maxAnswerBytes: mebibytes(connection.maxAnswerSize),
    cursorParam: connection.cursorParam,
    contract: connection.contract,
    proxy: connection.proxy.proxy,
    ca: connection.trust.ca,
    onRequest: requestEvents(ctx),
    onWaiting: ctx.reporter.showsProgress ? waitNotices(ctx) : undefined,
    pacer: pacerOf(connection),
  });
  ctx.onCleanup(() => client.close());
  return client;
}

function mebibytes(size: number | undefined): number | undefined {
  return size === undefined ? undefined : size * 1024 * 1024;
}

/** --debug logs every attempt; a terminal hears when the service's rate limit pauses the run. */
function requestEvents(ctx: RunContext): ((event: RequestEvent) => void) | undefined {
  const { reporter } = ctx;
  if (!reporter.debugging && !reporter.showsProgress) return undefined;
  let pausedUntil = 0;
  return (event) => {
    if (reporter.debugging) reporter.debugLine(describeRequest(event));
    if (event.status !== 429 || event.retryInMs === undefined) return;
    // Every request in flight meets the same pause: it is said once, when a new one begins.
    const until = Date.now() + event.retryInMs;
    if (until <= pausedUntil) return;
    pausedUntil = until;
    const seconds = Math.max(1, Math.round(event.retryInMs / 1000));
    reporter.progressNote(`The service's rate limit was reached (429): pausing ${seconds} s, then going on.`);
  };
}

/** When a request has waited this many seconds, and every 10 s after the last of them, a terminal hears of it. */
const NOTICE_AT_SECONDS = [3, 10];

/**
 * On a terminal, a request that has waited for its answer a while is said as it waits ("waiting for
 * api.example.com:443: 20 s…"), a line each time, so a silent server never looks like a frozen screen.
 */
function waitNotices(ctx: RunContext): (notice: WaitNotice | undefined) => void {
  let saidAt = 0;
  return (notice) => {
    if (notice === undefined) {
      saidAt = 0;
      return;
    }
    const seconds = Math.floor(notice.waitedMs / 1000);
    const due = NOTICE_AT_SECONDS.find((at) => at > saidAt) ?? saidAt + 10;
    if (seconds < due) return;
    saidAt = seconds;
    ctx.reporter.progressNote(`waiting for ${notice.where}: ${seconds} s…`);
  };
}

/** One line per attempt; the event carries no key, and the Authorization header is shown redacted. */
function describeRequest(event: RequestEvent): string {
  const outcome = event.status !== undefined ? String(event.status) : (event.error ?? 'no answer');
  const retry = event.retryInMs !== undefined ? `, retry in ${event.retryInMs} ms` : '';
  const took = `${Math.round(event.durationMs)} ms, attempt ${event.attempt}${retry}`;
  return `${event.method} ${event.url} (Authorization: Bearer ***) -> ${outcome} in ${took}`;
}
