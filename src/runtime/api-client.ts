import { createClient, type ProspectClient, type RequestEvent } from '../api/index.js';
import type { Connection } from './connection.js';
import type { RunContext } from './context.js';

/** The one place the CLI builds its client: debug logging and cancellation are wired here. */
export function createApiClient(ctx: RunContext, connection: Connection): ProspectClient {
  const client = createClient({
    baseUrl: connection.baseUrl,
    apiKey: connection.apiKey,
    signal: ctx.signal,
    ...(ctx.global.pageSize !== undefined ? { pageSize: ctx.global.pageSize } : {}),
    ...(ctx.global.timeout !== undefined ? { timeoutMs: ctx.global.timeout * 1000 } : {}),
    ...(ctx.global.maxRetries !== undefined ? { maxRetries: ctx.global.maxRetries } : {}),
    ...(connection.cursorParam ? { cursorParam: connection.cursorParam } : {}),
    ...(ctx.reporter.debugging ? { onRequest: (event: RequestEvent) => ctx.reporter.debugLine(describeRequest(event)) } : {}),
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
