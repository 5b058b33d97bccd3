import { setFlagsFromString } from 'node:v8';
import { createClient, type ProspectClient, type RequestEvent, type WaitNotice } from '../api/index.js';
import type { Connection } from './connection.js';
import type { RunContext } from './context.js';

/** The one place the CLI builds its client: debug logging, cancellation and the heap setting are wired here. */
export function createApiClient(ctx: RunContext, connection: Connection): ProspectClient {
  keepOldGenerationSmall();
  compileHttpParserOnce();
  const client = createClient({
    baseUrl: connection.baseUrl,
    apiKey: connection.apiKey,
    signal: ctx.signal,
    pageSize: ctx.global.pageSize,
    timeoutMs: ctx.global.timeout !== undefined ? ctx.global.timeout * 1000 : undefined,
    maxRetries: ctx.global.maxRetries,
    cursorParam: connection.cursorParam,
    proxy: connection.proxy.proxy,
    ca: connection.trust.ca,
    onRequest: ctx.reporter.debugging ? (event: RequestEvent) => ctx.reporter.debugLine(describeRequest(event)) : undefined,
    onWaiting: ctx.reporter.showsProgress ? waitNotices(ctx) : undefined,
  });
  ctx.onCleanup(() => client.close());
  return client;
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
  return `${event.method} ${event.url} (Authorization: Bearer ***) -> ${outcome} in ${Math.round(event.durationMs)} ms, attempt ${event.attempt}${retry}`;
}

/**
 * Each page of an export leaves a few MB behind once it is written (its text, its parsed rows and
 * their checked copies). Left to itself V8 lets the old generation grow to several times its live
 * size between full collections (173 MB for a 209,000-row export); growing it by 60% keeps a long
 * export under 150 MB (100% measured 151 MB once the client read a page ahead), where 20% cost
 * 10-25% more wall time in collections (BENCHMARKS.md section 4). V8 reads this heuristic at every
 * collection, so it can be set while running; it is set here, when a command is about to make calls,
 * and not at start, because changing a V8 flag makes Node compile its own modules loaded afterwards
 * without their code cache (25 ms more for `prospect --version`).
 */
function keepOldGenerationSmall(): void {
  setFlagsFromString('--heap-growing-percent=60');
}

/**
 * V8 doubles the young generation, up to 16 MB a semi-space (32 MB in all), whenever much of it
 * survives a scavenge, and lets the old generation grow by the young generation's capacity on top of
 * heap-growing-percent. A pipeline holds company pages and contact batches long enough for them to
 * survive scavenges, so its young generation grew to the maximum: 32 MB, plus 16 MB more old
 * generation, of a 154-163 MB peak over 20,000 companies (183 MB over 100,000 of a 1,000,000-company
 * sandbox). Kept at the size start-up left it (4 MB a semi-space for a pipeline) the peaks are
 * 122-128 MB and 143-151 MB, for 10-15% more CPU in scavenges: more of them, each as large. V8
 * reads the growth factor each time it would grow the space (1: it stays as it is), so it is set
 * while running; given at start, V8 would raise it to 2. `companies` does not ask for it: it peaks
 * at 133 MB over a 700,000-row export without it, and it would spend ~10% more CPU.
 */
export function keepYoungGenerationSmall(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}

/**
 * undici parses HTTP with llhttp compiled to WebAssembly, which V8 compiles twice: at once with its
 * baseline compiler (Liftoff), then again in the background with its optimizing one (TurboFan). The
 * second compile cost every data command 36 MB of peak RSS and 130 ms of CPU (107 MB and 0.40 s for
 * `companies --max 1`, 71 MB and 0.27 s without), and measured no gain on a 139,561-row export,
 * whose time is in JSON, checks and CSV, not in reading HTTP. Set before the first request, which is
 * when undici compiles llhttp.
 */
function compileHttpParserOnce(): void {
  setFlagsFromString('--liftoff-only');
}
