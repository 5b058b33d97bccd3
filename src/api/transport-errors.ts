/**
 * A request that got no complete answer (refused, reset, cut short, timed out), described in words
 * a person can act on. Whether it is worth another attempt is retry.ts's decision.
 */
import { redact, type LastFailure } from './error-responses.js';
import { RequestError, ServiceError } from './errors.js';
import { classifyTransportFailure } from './retry.js';

const NETWORK_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection broken',
  UND_ERR_SOCKET: 'connection closed by the other side',
  UND_ERR_CLOSED: 'connection closed',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'answer cut short',
  EAI_AGAIN: 'host name lookup failed temporarily',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
};

function errorCode(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // Happy-eyeballs connects (localhost → ::1 and 127.0.0.1) fail with an AggregateError.
  const first = (error as { errors?: unknown }).errors;
  return Array.isArray(first) ? errorCode(first[0]) : undefined;
}

export interface TransportFacts {
  /** The attempt's own deadline fired. */
  timedOut: boolean;
  timeoutMs: number;
  /** The API key, only so it can be redacted from undici's message. */
  secret: string;
  baseUrl: URL;
}

/** A failure worth another attempt (LastFailure), or the error to end the request with. */
export function describeTransportFailure(error: unknown, facts: TransportFacts): LastFailure | { kind: 'final'; error: RequestError | Error } {
  const code = errorCode(error);
  const verdict = classifyTransportFailure(code, facts.timedOut);
  if (verdict === 'timeout') return { kind: 'timeout', timeoutMs: facts.timeoutMs, cause: error };
  const message = error instanceof Error ? redact(error.message, facts.secret).replace(/\s+/g, ' ').trim() : String(error);
  // A bug in how prospect called undici: a plain Error, which the CLI reports as an internal error.
  if (verdict === 'bug') return { kind: 'final', error: new Error(`invalid request to the service: ${message}`, { cause: error }) };
  const words = (code !== undefined ? NETWORK_WORDS[code] : undefined) ?? (message || 'network error');
  const description = code !== undefined ? `${words} (${code})` : words;
  if (verdict === 'final') {
    return {
      kind: 'final',
      error: new ServiceError(`cannot reach the service at ${facts.baseUrl.origin}: ${description}`, {
        reason: description,
        code,
        hint: 'Check the base URL.',
        cause: error,
      }),
    };
  }
  return { kind: 'network', description, cause: error };
}
