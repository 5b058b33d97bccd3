/**
 * A tiny real HTTP server on loopback (port 0) whose answers are scripted per request, for
 * testing the API client against real sockets instead of mocks. It records every request it got,
 * headers included, so tests can assert what was (or was not) sent.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createClient, type ClientOptions, type ProspectClient } from '../../src/api/index.js';

export interface ScriptedResponse {
  /** Default 200. */
  status?: number;
  headers?: Record<string, string | number | string[]>;
  /** A string is sent as is; anything else is JSON-encoded (with a JSON content type). */
  body?: unknown;
  /** Wait before sending the headers. */
  delayMs?: number;
  /** Answer only once this settles (then after delayMs): lets a test decide when, by events, not timers. */
  holdUntil?: Promise<unknown>;
  /** Send headers and the first half of the body, wait this long, then the rest. */
  stallMidBodyMs?: number;
  /** Send headers (with the full Content-Length) and half the body, then destroy the socket. */
  destroyMidBody?: boolean;
  /** Close the connection with a TCP reset before any answer (the client sees ECONNRESET). */
  resetConnection?: boolean;
  /** Close the connection cleanly before any answer. */
  closeConnection?: boolean;
  /** Never answer; the socket stays open until the client gives up or the server closes. */
  neverRespond?: boolean;
}

export interface RecordedRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The client's port: requests sharing it came over one keep-alive connection. */
  remotePort: number | undefined;
}

export type Script = ScriptedResponse[] | ((request: RecordedRequest, index: number) => ScriptedResponse);

export interface ScriptedServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** How many answers have been sent in full so far. */
  answered(): number;
  /** Replace the script; the request index keeps counting. */
  setScript(script: Script): void;
  close(): Promise<void>;
}

/**
 * An array script answers the n-th request with its n-th entry; once it runs out, the last entry
 * repeats (so `[{status: 503}]` means "always 503"). An empty array answers 500.
 */
export async function startScriptedServer(script: Script): Promise<ScriptedServer> {
  let current = script;
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const pick = (request: RecordedRequest, index: number): ScriptedResponse => {
    if (typeof current === 'function') return current(request, index);
    return current[Math.min(index, current.length - 1)] ?? { status: 500, body: { error: { code: 'unscripted' } } };
  };
  const later = (ms: number, run: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };

  let answered = 0;
  const server = createServer((req, res) => {
    res.once('finish', () => answered++);
    const recorded = record(req);
    const index = requests.length;
    requests.push(recorded);
    const scripted = pick(recorded, index);
    if (scripted.neverRespond) return;
    const respond = () => later(scripted.delayMs ?? 0, () => answer(req, res, scripted, later));
    if (scripted.holdUntil) void scripted.holdUntil.then(respond, respond);
    else respond();
  });
  server.keepAliveTimeout = 5_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    answered: () => answered,
    setScript(next) {
      current = next;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Servers and clients opened by serveScript and clientOf, for closeScripted. */
const opened: Array<{ close(): Promise<void> }> = [];

/** A scripted server that closeScripted() closes. */
export async function serveScript(script: Script): Promise<ScriptedServer> {
  const server = await startScriptedServer(script);
  opened.push(server);
  return server;
}

/** prospect's API client of a scripted server (its URL unless options say otherwise), closed by closeScripted(). */
export function clientOf(server: ScriptedServer, options: Partial<ClientOptions> & { apiKey: string }): ProspectClient {
  const client = createClient({ baseUrl: server.url, ...options });
  opened.push(client);
  return client;
}

/** Closes every client, then every server, that serveScript and clientOf opened: `afterEach(closeScripted)`. */
export async function closeScripted(): Promise<void> {
  for (const item of opened.splice(0).reverse()) await item.close();
}

function record(req: IncomingMessage): RecordedRequest {
  const url = req.url ?? '/';
  const parsed = new URL(url, 'http://scripted.invalid');
  return {
    method: req.method ?? 'GET',
    url,
    path: parsed.pathname,
    query: parsed.searchParams,
    headers: { ...req.headers },
    remotePort: req.socket.remotePort,
  };
}

function answer(
  req: IncomingMessage,
  res: ServerResponse,
  scripted: ScriptedResponse,
  later: (ms: number, run: () => void) => void,
): void {
  if (scripted.resetConnection) {
    req.socket.resetAndDestroy();
    return;
  }
  if (scripted.closeConnection) {
    req.socket.destroy();
    return;
  }
  const { text, contentType } = encodeBody(scripted.body);
  const payload = Buffer.from(text, 'utf8');
  const headers: Record<string, string | number | string[]> = {
    'content-type': contentType,
    'content-length': payload.length,
    ...scripted.headers,
  };
  res.writeHead(scripted.status ?? 200, headers);
  const half = Math.floor(payload.length / 2);

  if (scripted.destroyMidBody) {
    res.write(payload.subarray(0, half), () => later(10, () => req.socket.destroy()));
    return;
  }
  if (scripted.stallMidBodyMs !== undefined) {
    res.write(payload.subarray(0, half));
    later(scripted.stallMidBodyMs, () => {
      if (!res.destroyed) res.end(payload.subarray(half));
    });
    return;
  }
  res.end(payload);
}

function encodeBody(body: unknown): { text: string; contentType: string } {
  if (body === undefined) return { text: '', contentType: 'application/json' };
  if (typeof body === 'string') {
    return { text: body, contentType: /^\s*</.test(body) ? 'text/html; charset=utf-8' : 'application/json' };
  }
  return { text: JSON.stringify(body), contentType: 'application/json' };
}

// ---------------------------------------------------------------------------------------------
// Sample bodies shaped like the contract's answers

export function sampleCompany(domain: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    domain,
    company_name: `Company ${domain}`,
    employee_range: '11-50',
    industry: 'retail',
    country: 'united states',
    crux_rank: 1000,
    phone: null,
    linkedin_url: null,
    tech_count: 1,
    technologies: [{ t: 'Shopify', c: 'Ecommerce', v: null }],
    ...extra,
  };
}

export const SAMPLE_COMPANIES_META = {
  source: { dataset: 'web crawl', method: 'rendered pages', publisher: 'example', history_since: '2020' },
  field_fill_rates: { phone: 12.5, linkedin_url: 40.1, description: 55 },
  scope: 'crux_rank <= 1000000',
};

export function companiesPage(domains: string[], nextCursor?: string | null): Record<string, unknown> {
  return {
    data: domains.map((domain) => sampleCompany(domain)),
    meta: SAMPLE_COMPANIES_META,
    ...(nextCursor !== undefined ? { next_cursor: nextCursor } : {}),
  };
}

export function sampleContact(domain: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    domain,
    full_name: 'Ada Lovelace',
    first_name: 'Ada',
    last_name: 'Lovelace',
    title: 'CEO',
    seniority: 'cxo',
    department: 'executive',
    business_email: `ada@${domain}`,
    business_email_last_seen: '2025-01-15',
    linkedin_url: null,
    ...extra,
  };
}

export function errorBody(code: string, reason: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { error: { code, reason, ...extra } };
}

/** The error a promise rejects with; a promise that resolves fails the test. */
export async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}
