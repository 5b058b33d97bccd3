/**
 * How the sandbox's answers go on the wire: JSON with its length and no caching, HEAD without a
 * body, nothing written to a response already sent or a socket already gone.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ApiError } from './errors.js';
import type { Reply } from './types.js';

/** Room for 100 long domains in one query string; beyond it Node refuses the request (431, JSON). */
export const MAX_HEADER_BYTES = 64 * 1024;

export function errorReply(error: ApiError): Reply {
  return { status: error.status, body: error.body(), headers: error.headers };
}

export function sendError(req: IncomingMessage, res: ServerResponse, error: ApiError): void {
  send(req, res, errorReply(error));
}

export function send(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
  if (!writable(req, res)) return;
  const payload = jsonPayload(reply);
  res.writeHead(reply.status, replyHeaders(reply, payload.length));
  // HEAD: same status and headers as GET, no body (contract row 26).
  res.end(req.method === 'HEAD' ? undefined : payload);
}

/** A non-JSON answer (an injected proxy page). */
export function sendBytes(
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

export function writable(req: IncomingMessage, res: ServerResponse): boolean {
  return !(res.headersSent || res.destroyed || req.socket.destroyed);
}

export function jsonPayload(reply: Reply): Buffer {
  return Buffer.from(reply.json ?? JSON.stringify(reply.body), 'utf8');
}

export function replyHeaders(reply: Reply, contentLength: number): Record<string, string | number> {
  return {
    'content-type': 'application/json; charset=utf-8',
    'content-length': contentLength,
    'cache-control': 'no-store',
    ...reply.headers,
  };
}

/** Requests Node cannot parse (bad request line, headers too large) still get a JSON answer. */
export function answerMalformedRequest(error: NodeJS.ErrnoException, socket: Socket): void {
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
