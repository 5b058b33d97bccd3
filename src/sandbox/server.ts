/**
 * The sandbox's HTTP server (node:http, no framework). It draws each request's fate from the fault
 * plan, waits out its delay, then injects its fault (fault-injection.ts) or hands it to its route
 * (api-dispatch.ts); replies.ts writes the answer. Whatever a client sends, the process answers with
 * a JSON error and keeps running.
 *
 * Order of checks for /api/v1 requests: the request's fate is drawn on arrival (fault plan) →
 * latency and spike → injected fault → path (404) → method (405) → key (401) → rate limit (429) →
 * route: plan (403, contacts) → parameters (400) → data (422). The faults that cut a body short
 * cut the answer the request would have had, whatever it is.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { assertReadMethod, endpointOf, serveApi, type ApiRoutes, type RoutedRequest } from './api-dispatch.js';
import { STATS_PATH } from './defaults.js';
import { ApiError } from './errors.js';
import { injectFault } from './fault-injection.js';
import { LATENCY_SPIKE, type FaultPlan } from './faults.js';
import { OpenResponses } from './open-responses.js';
import { answerMalformedRequest, errorReply, MAX_HEADER_BYTES, send, sendError } from './replies.js';
import type { Endpoint } from './stats.js';
import type { Reply } from './types.js';
import type { VariantChain } from './variants.js';

/** Longer than typical client pools keep idle sockets (undici: 4 s), so the client closes first. */
const KEEP_ALIVE_MS = 10_000;

export interface SandboxServerParts extends ApiRoutes {
  readonly faults: FaultPlan;
  /** The other service it plays, if any (variants.ts): between the wire and the routes. */
  readonly variants: VariantChain;
}

export interface SandboxHttpServer {
  readonly server: Server;
  /** Stops accepting, lets in-flight answers finish briefly, then drops whatever is left. */
  close(): Promise<void>;
}

export function createSandboxServer(parts: SandboxServerParts): SandboxHttpServer {
  const open = new OpenResponses();
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES, keepAliveTimeout: KEEP_ALIVE_MS }, (req, res) => {
    handle(parts, open, req, res).catch((error: unknown) => {
      process.stderr.write(
        `prospect sandbox: unexpected failure: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      sendError(req, res, new ApiError(500, 'internal_error', 'Unexpected failure in the sandbox.'));
    });
  });
  server.headersTimeout = KEEP_ALIVE_MS + 5_000;
  server.on('clientError', answerMalformedRequest);
  return {
    server,
    close: () =>
      new Promise<void>((resolve) => {
        open.closeAll();
        server.close(() => resolve());
        server.closeIdleConnections();
        // In-flight answers are synchronous once started; anything still open after a moment is idle or stuck.
        setTimeout(() => server.closeAllConnections(), 500).unref();
      }),
  };
}

async function handle(
  parts: SandboxServerParts,
  open: OpenResponses,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { path, search } = splitUrl(req.url ?? '/');
  if (path === STATS_PATH) return void serveStats(parts, req, res);
  const body = parts.variants.empty || req.method !== 'POST' ? undefined : await readBody(req);
  const { routed, refused } = applyVariants(parts.variants, req, path, search, body);
  const endpoint = endpointOf(routed.path);
  parts.stats.countRequest(endpoint);
  const answer = () => {
    const reply = refused ?? replyFor(parts, routed, endpoint);
    return parts.variants.empty ? reply : parts.variants.answer(reply, answerContext(req, path, search));
  };
  if (!path.startsWith('/api/')) return send(req, res, answer());
  // Drawn before any wait, so the n-th request to arrive meets the n-th draw whatever the delays.
  const fate = parts.faults.next();
  if (fate.spiked) parts.stats.countFault(LATENCY_SPIKE);
  if (fate.fault) parts.stats.countFault(fate.fault.name);
  if (fate.delayMs > 0) await open.delay(fate.delayMs, res);
  if (fate.fault) return injectFault(fate.fault.outcome, { req, res, open }, answer);
  send(req, res, answer());
}

/** The answer the request gets when nothing is injected: the route's reply or its JSON error. */
function replyFor(parts: SandboxServerParts, req: RoutedRequest, endpoint: Endpoint): Reply {
  try {
    const reply = serveApi(parts, req, endpoint);
    const data = (reply.body as { data?: unknown } | undefined)?.data;
    if (Array.isArray(data)) parts.stats.countRows(endpoint, data.length);
    return reply;
  } catch (error) {
    if (error instanceof ApiError) return errorReply(error);
    throw error;
  }
}

function serveStats(parts: SandboxServerParts, req: IncomingMessage, res: ServerResponse): void {
  try {
    assertReadMethod(req.method);
    send(req, res, { status: 200, body: parts.stats.snapshot() });
  } catch (error) {
    if (error instanceof ApiError) sendError(req, res, error);
    else throw error;
  }
}

/** The request as the variants read it (their parameter names, their method), or their refusal. */
function applyVariants(
  variants: VariantChain,
  req: IncomingMessage,
  path: string,
  search: string,
  body: string | undefined,
): { routed: RoutedRequest & { path: string }; refused: Reply | undefined } {
  if (variants.empty) return { routed: { method: req.method, path, search, headers: req.headers }, refused: undefined };
  const query = new URLSearchParams(search);
  const seen = { method: req.method ?? 'GET', path, query, headers: req.headers, body };
  const refused = variants.request(seen);
  return { routed: { ...seen, search: seen.query.toString() }, refused };
}

/** The most of a POST body a variant reads (a verify call's JSON is a few dozen bytes); the rest is dropped. */
const MAX_BODY_BYTES = 64 * 1024;

/** A POST's body, for a variant that reads one (verify-post-only); cut at MAX_BODY_BYTES. */
async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    if (size < MAX_BODY_BYTES) chunks.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString('utf8');
}

function answerContext(req: IncomingMessage, path: string, search: string) {
  return { path, clientQuery: new URLSearchParams(search), origin: `http://${req.headers.host ?? 'localhost'}` };
}

function splitUrl(url: string): { path: string; search: string } {
  const q = url.indexOf('?');
  return q < 0 ? { path: url, search: '' } : { path: url.slice(0, q), search: url.slice(q + 1) };
}
