/**
 * The sandbox's HTTP layer (node:http, no framework). It classifies each request, applies the fault
 * plan, authenticates, rate-limits, dispatches to a route and writes JSON. Whatever a client sends,
 * the process answers with a JSON error and keeps running.
 *
 * Order of checks for /api/v1 requests: the request's fate is drawn on arrival (fault plan) →
 * latency and spike → injected fault → path (404) → method (405) → key (401) → rate limit (429) →
 * route: plan (403, contacts) → parameters (400) → data (422). The faults that cut a body short
 * cut the answer the request would have had, whatever it is.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { authenticate } from './auth.js';
import { STATS_PATH } from './defaults.js';
import { ApiError } from './errors.js';
import { LATENCY_SPIKE, type FaultOutcome, type FaultPlan } from './faults.js';
import { parseQuery, type RawQuery } from './query.js';
import type { RateLimiter } from './rate-limit.js';
import type { Endpoint, StatsCounter } from './stats.js';
import type { Reply, Route } from './types.js';

/** Room for 100 long domains in one query string; beyond it Node refuses the request (431, JSON). */
const MAX_HEADER_BYTES = 64 * 1024;
/** Longer than typical client pools keep idle sockets (undici: 4 s), so the client closes first. */
const KEEP_ALIVE_MS = 10_000;

export interface SandboxServerParts {
  readonly routes: Readonly<Record<Exclude<Endpoint, 'other'>, Route>>;
  readonly stats: StatsCounter;
  readonly faults: FaultPlan;
  readonly rateLimiter: RateLimiter | undefined;
}

const API_PATHS: Readonly<Record<string, Exclude<Endpoint, 'other'>>> = {
  '/api/v1/companies': 'companies',
  '/api/v1/countries': 'countries',
  '/api/v1/contacts': 'contacts',
  '/api/v1/verify': 'verify',
};

export interface SandboxHttpServer {
  readonly server: Server;
  /** Stops accepting, lets in-flight answers finish briefly, then drops whatever is left. */
  close(): Promise<void>;
}

export function createSandboxServer(parts: SandboxServerParts): SandboxHttpServer {
  const pendingDelays = new Set<{ timer: NodeJS.Timeout; res: ServerResponse }>();
  /** Answers a fault left open on purpose (no-response, stall-mid-body). */
  const heldResponses = new Set<ServerResponse>();
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES, keepAliveTimeout: KEEP_ALIVE_MS }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      process.stderr.write(
        `prospect sandbox: unexpected failure: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      sendError(req, res, new ApiError(500, 'internal_error', 'Unexpected failure in the sandbox.'));
    });
  });
  server.headersTimeout = KEEP_ALIVE_MS + 5_000;
  server.on('clientError', answerMalformedRequest);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { path, search } = splitUrl(req.url ?? '/');
    if (path === STATS_PATH) return void serveStats(req, res);
    const endpoint: Endpoint = API_PATHS[path] ?? 'other';
    parts.stats.countRequest(endpoint);
    const answer = () => replyFor(req, endpoint, search);
    if (!path.startsWith('/api/')) return send(req, res, answer());
    // Drawn before any wait, so the n-th request to arrive meets the n-th draw whatever the delays.
    const fate = parts.faults.next();
    if (fate.spiked) parts.stats.countFault(LATENCY_SPIKE);
    if (fate.fault) parts.stats.countFault(fate.fault.name);
    if (fate.delayMs > 0) await delay(fate.delayMs, res);
    if (fate.fault) return inject(fate.fault.outcome, req, res, answer);
    send(req, res, answer());
  }

  /** The answer the request gets when nothing is injected: the route's reply or its JSON error. */
  function replyFor(req: IncomingMessage, endpoint: Endpoint, search: string): Reply {
    try {
      const reply = serveApi(req, endpoint, search);
      const data = (reply.body as { data?: unknown } | undefined)?.data;
      if (Array.isArray(data)) parts.stats.countRows(endpoint, data.length);
      return reply;
    } catch (error) {
      if (error instanceof ApiError) return errorReply(error);
      throw error;
    }
  }

  function inject(outcome: FaultOutcome, req: IncomingMessage, res: ServerResponse, answer: () => Reply): void {
    switch (outcome.kind) {
      case 'reply':
        return sendError(req, res, outcome.error);
      case 'html':
        return sendBytes(
          req,
          res,
          outcome.status,
          { 'content-type': 'text/html; charset=utf-8' },
          Buffer.from(outcome.body, 'utf8'),
        );
      case 'drop':
        return void req.socket.destroy();
      case 'no-response':
        return hold(res);
      case 'cut-body':
        return sendHalf(req, res, answer(), outcome.then);
    }
  }

  /** Headers with the full Content-Length and half the body; then the connection is destroyed, or kept silent. */
  function sendHalf(req: IncomingMessage, res: ServerResponse, reply: Reply, then: 'destroy' | 'stall'): void {
    if (!writable(req, res)) return;
    const payload = jsonPayload(reply);
    res.writeHead(reply.status, replyHeaders(reply, payload.length));
    res.flushHeaders();
    const half = req.method === 'HEAD' ? Buffer.alloc(0) : payload.subarray(0, Math.floor(payload.length / 2));
    if (then === 'stall') {
      if (half.length > 0) res.write(half);
      return hold(res);
    }
    if (half.length === 0) return void req.socket.destroy();
    // Destroyed once the half is handed to the kernel, so the client really gets part of the body.
    res.write(half, () => req.socket.destroy());
  }

  /** Keeps a response open with nothing more to send; close() ends it. */
  function hold(res: ServerResponse): void {
    if (res.destroyed) return;
    heldResponses.add(res);
    res.once('close', () => heldResponses.delete(res));
  }

  function serveApi(req: IncomingMessage, endpoint: Endpoint, search: string): Reply {
    if (endpoint === 'other')
      throw new ApiError(
        404,
        'not_found',
        'No such endpoint. Endpoints: /api/v1/companies, /api/v1/countries, /api/v1/contacts, /api/v1/verify.',
      );
    assertReadMethod(req);
    const plan = authenticate(req.headers.authorization);
    const limit = parts.rateLimiter?.check(plan);
    if (limit && !limit.allowed) {
      parts.stats.countRateLimited();
      throw new ApiError(
        429,
        'rate_limited',
        `Too many requests for this key; retry after ${limit.retryAfterSeconds} s.`,
        { retry_after: limit.retryAfterSeconds },
        {
          'retry-after': String(limit.retryAfterSeconds),
        },
      );
    }
    // Parsed on first use, so a route can check the plan (403) before the query's syntax (400).
    let query: RawQuery | undefined;
    return parts.routes[endpoint]({
      plan,
      headers: req.headers,
      get query() {
        return (query ??= parseQuery(search));
      },
    });
  }

  function serveStats(req: IncomingMessage, res: ServerResponse): void {
    try {
      assertReadMethod(req);
      send(req, res, { status: 200, body: parts.stats.snapshot() });
    } catch (error) {
      if (error instanceof ApiError) sendError(req, res, error);
      else throw error;
    }
  }

  function delay(ms: number, res: ServerResponse): Promise<void> {
    return new Promise((resolve) => {
      const entry = {
        res,
        timer: setTimeout(() => {
          pendingDelays.delete(entry);
          resolve();
        }, ms),
      };
      pendingDelays.add(entry);
    });
  }

  return {
    server,
    close: () =>
      new Promise<void>((resolve) => {
        for (const { timer, res } of pendingDelays) {
          clearTimeout(timer);
          res.destroy();
        }
        pendingDelays.clear();
        for (const res of heldResponses) res.destroy();
        heldResponses.clear();
        server.close(() => resolve());
        server.closeIdleConnections();
        // In-flight answers are synchronous once started; anything still open after a moment is idle or stuck.
        setTimeout(() => server.closeAllConnections(), 500).unref();
      }),
  };
}

function assertReadMethod(req: IncomingMessage): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    throw new ApiError(
      405,
      'method_not_allowed',
      `Method ${String(req.method).slice(0, 16)} is not allowed; use GET.`,
      {},
      { allow: 'GET, HEAD' },
    );
  }
}

function splitUrl(url: string): { path: string; search: string } {
  const q = url.indexOf('?');
  return q < 0 ? { path: url, search: '' } : { path: url.slice(0, q), search: url.slice(q + 1) };
}

function errorReply(error: ApiError): Reply {
  return { status: error.status, body: error.body(), headers: error.headers };
}

function sendError(req: IncomingMessage, res: ServerResponse, error: ApiError): void {
  send(req, res, errorReply(error));
}

function send(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
  if (!writable(req, res)) return;
  const payload = jsonPayload(reply);
  res.writeHead(reply.status, replyHeaders(reply, payload.length));
  // HEAD: same status and headers as GET, no body (contract row 26).
  res.end(req.method === 'HEAD' ? undefined : payload);
}

/** A non-JSON answer (an injected proxy page). */
function sendBytes(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  payload: Buffer,
): void {
  if (!writable(req, res)) return;
  res.writeHead(status, { ...headers, 'content-length': payload.length, 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : payload);
}

function writable(req: IncomingMessage, res: ServerResponse): boolean {
  return !(res.headersSent || res.destroyed || req.socket.destroyed);
}

function jsonPayload(reply: Reply): Buffer {
  return Buffer.from(reply.json ?? JSON.stringify(reply.body), 'utf8');
}

function replyHeaders(reply: Reply, contentLength: number): Record<string, string | number> {
  return {
    'content-type': 'application/json; charset=utf-8',
    'content-length': contentLength,
    'cache-control': 'no-store',
    ...reply.headers,
  };
}

/** Requests Node cannot parse (bad request line, headers too large) still get a JSON answer. */
function answerMalformedRequest(error: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const body = JSON.stringify({
    error: tooLarge
      ? { code: 'request_too_large', reason: `The request line and headers exceed ${MAX_HEADER_BYTES / 1024} KiB.` }
      : { code: 'bad_request', reason: 'The request is not valid HTTP.' },
  });
  socket.end(
    `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      'connection: close\r\n\r\n' +
      body,
  );
}
