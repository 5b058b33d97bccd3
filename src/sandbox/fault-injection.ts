/** What an injected fault does to the answer on the wire (the plan of which request meets which is faults.ts). */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultOutcome } from './faults.js';
import type { OpenResponses } from './open-responses.js';
import { jsonPayload, replyHeaders, sendBytes, sendError, writable } from './replies.js';
import type { Reply } from './types.js';

export function injectFault(
  outcome: FaultOutcome,
  exchange: { req: IncomingMessage; res: ServerResponse; open: OpenResponses },
  answer: () => Reply,
): void {
  const { req, res, open } = exchange;
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
      return open.hold(res);
    case 'cut-body':
      return sendHalf(exchange, answer(), outcome.then);
  }
}

/** Headers with the full Content-Length and half the body; then the connection is destroyed, or kept silent. */
function sendHalf(
  { req, res, open }: { req: IncomingMessage; res: ServerResponse; open: OpenResponses },
  reply: Reply,
  then: 'destroy' | 'stall',
): void {
  if (!writable(req, res)) return;
  const payload = jsonPayload(reply);
  res.writeHead(reply.status, replyHeaders(reply, payload.length));
  res.flushHeaders();
  const half = req.method === 'HEAD' ? Buffer.alloc(0) : payload.subarray(0, Math.floor(payload.length / 2));
  if (then === 'stall') {
    if (half.length > 0) res.write(half);
    return open.hold(res);
  }
  if (half.length === 0) return void req.socket.destroy();
  // Destroyed once the half is handed to the kernel, so the client really gets part of the body.
  res.write(half, () => req.socket.destroy());
}
