import { createClient, type ProspectClient, type RequestEvent } from '../api/index.js';
import type { Connection } from './connection.js';
import type { RunContext } from './context.js';

/** The one place the CLI builds its client: debug logging and cancellation are wired here. */
export function createApiClient(ctx: RunContext, connection: Connection): ProspectClient {
  const client = createClient({
    baseUrl: connection.baseUrl,
    apiKey: connection.apiKey,
    signal: ctx.signal,
    pageSize: ctx.global.pageSize,
    timeoutMs: ctx.global.timeout !== undefined ? ctx.global.timeout * 1000 : undefined,
    maxRetries: ctx.global.maxRetries,
    cursorParam: connection.cursorParam,
    onRequest: ctx.reporter.debugging ? (event: RequestEvent) => ctx.reporter.debugLine(describeRequest(event)) : undefined,
  });
  ctx.onCleanup(() => client.close());
  return client;
}

/** One line per attempt; the event carries no key, and the Authorization header is shown redacted. */
function describeRequest(event: RequestEvent): string {
  const outcome = event.status !== undefined ? String(event.status) : (event.error ?? 'no answer');
  const retry = event.retryInMs !== undefined ? `, retry in ${event.retryInMs} ms` : '';
  return `${event.method} ${event.url} (Authorization: Bearer ***) -> ${outcome} in ${Math.round(event.durationMs)} ms, attempt ${event.attempt}${retry}`;
}
