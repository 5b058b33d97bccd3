/**
 * A request that got no complete answer (no such host, refused, reset, cut short, timed out, a TLS
 * or proxy failure), read as facts: where (host:port), which kind of failure, in which words.
 * Whether it is worth another attempt is retry.ts's decision.
 */
import type { LastFailure, NetworkFailureClass } from './error-responses.js';
import type { FailureKind, RequestError } from './errors.js';
import { failure } from './failures.js';
import { redact } from '../util/redact.js';
import { AT_PROXY, tlsAlertBehind, TunnelRefusedError } from './dispatcher.js';
import { describeProxy, portOf } from './proxy.js';
import { classifyTransportFailure, isTlsFailureCode } from './retry.js';

const NETWORK_WORDS: Record<string, [NetworkFailureClass, string]> = {
  ECONNREFUSED: ['refused', 'connection refused'],
  ECONNRESET: ['connection', 'connection reset'],
  EPIPE: ['connection', 'connection broken'],
  UND_ERR_SOCKET: ['connection', 'connection closed by the other side'],
  UND_ERR_CLOSED: ['connection', 'connection closed'],
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: ['connection', 'answer cut short'],
  EAI_AGAIN: ['DNS', 'host name lookup failed temporarily'],
  EHOSTUNREACH: ['connection', 'host unreachable'],
  ENETUNREACH: ['connection', 'network unreachable'],
  ENOTFOUND: ['DNS', 'host not found'],
};

/** What each timeout code means; a timeout is its own kind of failure (LastFailure `timeout`), not a network class. */
const TIMEOUT_WORDS: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'no connection',
  UND_ERR_HEADERS_TIMEOUT: 'no answer',
  UND_ERR_BODY_TIMEOUT: 'the answer stopped coming',
  ETIMEDOUT: 'no connection',
};

const OLD_TLS = 'it offers only TLS older than 1.2, which prospect refuses';

/** Certificate and TLS-version failures, each final: its kind, and what is wrong in words. */
const TLS_PROBLEMS: Record<string, readonly [FailureKind, string]> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: ['tls_untrusted', 'its certificate is not trusted'],
  UNABLE_TO_GET_ISSUER_CERT: ['tls_untrusted', 'its certificate is not trusted'],
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: ['tls_untrusted', 'its certificate is not trusted'],
  SELF_SIGNED_CERT_IN_CHAIN: ['tls_untrusted', 'its certificate is not trusted (a self-signed CA)'],
  DEPTH_ZERO_SELF_SIGNED_CERT: ['tls_untrusted', 'its certificate is self-signed and not trusted'],
  CERT_UNTRUSTED: ['tls_untrusted', 'its certificate is not trusted'],
  CERT_SIGNATURE_FAILURE: ['tls_untrusted', 'its certificate has a bad signature'],
  CERT_HAS_EXPIRED: ['tls_expired', 'its certificate has expired'],
  CERT_NOT_YET_VALID: ['tls_not_yet_valid', 'its certificate is not valid yet'],
  ERR_TLS_CERT_ALTNAME_INVALID: ['tls_hostname', 'its certificate is for another host name'],
  ERR_SSL_WRONG_VERSION_NUMBER: ['tls_not_tls', 'it does not speak TLS on this port'],
  ERR_SSL_UNSUPPORTED_PROTOCOL: ['tls_old_version', OLD_TLS],
  ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION: ['tls_old_version', OLD_TLS],
  ERR_SSL_NO_PROTOCOLS_AVAILABLE: ['tls_old_version', OLD_TLS],
  ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED: [
    'tls_client_certificate',
    'it asks for a client certificate, which prospect does not send',
  ],
};

/** undici's codes for an error that wraps the one that says what happened (its cause). */
const WRAPPER_CODES = new Set(['UND_ERR_CONNECT', 'UND_ERR_ABORTED', 'UND_ERR_PRX_TLS']);

/**
 * The code that says what happened. A TLS alert anywhere in the chain wins: under TLS 1.3 a server
 * that demands a client certificate says so after the handshake, and undici reports the closed socket.
 * Otherwise the outermost code that is not a wrapper's, else the innermost error's.
 */
function errorCode(error: unknown): string | undefined {
  const chain = causes(error);
  const codes = chain.map(codeOf).filter((code) => code !== undefined);
  const tls = chain.map((each) => codeOf(tlsAlertBehind(each) ?? each)).find((code) => code && isTlsFailureCode(code));
  return tls ?? codes.find((code) => !WRAPPER_CODES.has(code)) ?? codeOf(chain.at(-1));
}

function codeOf(error: object | undefined): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The error and what it wraps (cause, and the first of an AggregateError: happy-eyeballs connects,
 * localhost → ::1 and 127.0.0.1, fail with one), outermost first.
 */
function causes(error: unknown): object[] {
  const chain: object[] = [];
  for (let each = error; each !== null && typeof each === 'object' && chain.length < 8;) {
    chain.push(each);
    const errors = (each as { errors?: unknown }).errors;
    each = Array.isArray(errors) ? errors[0] : (each as { cause?: unknown }).cause;
  }
  return chain;
}

/** Whether the failure was met on the way to the proxy (dispatcher.ts marks those), not to the service. */
function metAtProxy(error: unknown): boolean {
  return causes(error).some((each) => (each as { [AT_PROXY]?: boolean })[AT_PROXY] === true);
}

export interface TransportFacts {
  /** The attempt's own deadline fired. */
  timedOut: boolean;
  timeoutMs: number;
  /** The connection's own limit (TCP and TLS), shorter than timeoutMs: a connect timeout names it. */
  connectTimeoutMs?: number | undefined;
  /** The API key, only so it can be redacted from undici's message. */
  secret: string;
  baseUrl: URL;
  /** The proxy requests go through, if any: then every connection is to it. */
  proxy?: URL | undefined;
}

/** `api.example.com:443`: the host and port a request goes to, the default port written out. */
export function hostAndPort(url: URL): string {
  return `${url.hostname}:${portOf(url)}`;
}

/** A failure worth another attempt (LastFailure), or the error to end the request with. */
export function describeTransportFailure(
  error: unknown,
  facts: TransportFacts,
): LastFailure | { kind: 'final'; error: RequestError | Error } {
  const code = errorCode(error);
  const where = hostAndPort(facts.baseUrl);
  const verdict = classifyTransportFailure(code, facts.timedOut);
  if (verdict === 'timeout') {
    const words = code !== undefined ? TIMEOUT_WORDS[code] : undefined;
    const connecting = !facts.timedOut && code === 'UND_ERR_CONNECT_TIMEOUT';
    return {
      kind: 'timeout',
      timeoutMs: connecting ? (facts.connectTimeoutMs ?? facts.timeoutMs) : facts.timeoutMs,
      where: facts.proxy && connecting ? proxyWhere(facts.proxy) : where,
      words,
      connecting,
      cause: error,
    };
  }
  const message =
    error instanceof Error ? redact(error.message, facts.secret).replace(/\s+/g, ' ').trim() : String(error);
  // A bug in how prospect called undici: a plain Error, which the CLI reports as an internal error.
  if (verdict === 'bug')
    return { kind: 'final', error: new Error(`invalid request to the service: ${message}`, { cause: error }) };
  if (verdict === 'final' && code !== undefined && isTlsFailureCode(code)) {
    const atProxy = facts.proxy !== undefined && metAtProxy(error);
    return { kind: 'final', error: tlsError(atProxy ? proxyWhere(facts.proxy!) : where, code, error) };
  }
  const proxyStatus = /Proxy response \((\d{3})\)|Proxy Authentication Required \((\d{3})\)/.exec(message);
  if (facts.proxy !== undefined && proxyStatus)
    return proxyRefusal(facts.proxy, where, Number(proxyStatus[1] ?? proxyStatus[2]), error, proxyErrorName(error));
  const [failureClass, words] = (code !== undefined ? NETWORK_WORDS[code] : undefined) ?? [
    'connection',
    message || 'network error',
  ];
  const description = code !== undefined ? `${words} (${code})` : words;
  // Through a proxy, every connection is to the proxy: a refused or unknown host is the proxy's.
  const connectFailure = failureClass === 'refused' || failureClass === 'DNS';
  if (facts.proxy !== undefined && connectFailure) {
    return { kind: 'network', failureClass: 'proxy', where: proxyWhere(facts.proxy), description, cause: error };
  }
  if (verdict === 'final') {
    const what = `${failureClass}: ${description}`;
    return {
      kind: 'final',
      error: failure('unreachable', { reason: description, code, cause: error }, { where, what }),
    };
  }
  return { kind: 'network', failureClass, where, description, cause: error };
}

function proxyWhere(proxy: URL): string {
  return `the proxy ${describeProxy(proxy).replace(/^https?:\/\//, '')}`;
}

function tlsError(where: string, code: string, cause: unknown): RequestError {
  const [kind, what] = TLS_PROBLEMS[code] ?? ['tls_failed', 'the TLS handshake failed'];
  return failure(kind, { reason: what, code, cause }, { where, what });
}

/** The error name a proxy gave with its refusal of a tunnel: squid's `X-Squid-Error: ERR_DNS_FAIL 0`. */
function proxyErrorName(error: unknown): string | undefined {
  const refusal = causes(error).find((each): each is TunnelRefusedError => each instanceof TunnelRefusedError);
  const header = refusal?.headers['x-squid-error'];
  const value = Array.isArray(header) ? header[0] : header;
  return /^ERR_[A-Z_]+/.exec(value ?? '')?.[0];
}

function proxyRefusal(
  proxy: URL,
  where: string,
  status: number,
  cause: unknown,
  proxyError?: string,
): { kind: 'final'; error: RequestError } | LastFailure {
  const words = { proxy: describeProxy(proxy), where };
  // The proxy looked the name up and found nothing: a misspelt host, which no retry fixes.
  if (proxyError === 'ERR_DNS_FAIL') {
    const init = { status, code: 'proxy_dns_failure', reason: 'host not found by the proxy', cause };
    return { kind: 'final', error: failure('proxy_dns', init, words) };
  }
  if (status === 407) {
    const init = { status, code: 'proxy_auth', details: { credentials_given: proxy.username !== '' }, cause };
    return { kind: 'final', error: failure('proxy_auth', init, words) };
  }
  if (status === 403)
    return { kind: 'final', error: failure('proxy_refused', { status, code: 'proxy_refused', cause }, words) };
  // 502, 503, 504: the proxy could not reach the service; perhaps later it can.
  return {
    kind: 'network',
    failureClass: 'proxy',
    where,
    description: `the proxy ${words.proxy} could not connect to it (${status})`,
    cause,
  };
}

/**
 * A certificate or TLS-version failure met outside a request (a diagnostic handshake), said as a request says
 * it; undefined for any other error.
 */
export function tlsFailureError(error: unknown, baseUrl: URL): RequestError | undefined {
  const code = errorCode(error);
  if (code === undefined || !isTlsFailureCode(code)) return undefined;
  return tlsError(hostAndPort(baseUrl), code, error);
}
