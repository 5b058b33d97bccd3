/** A request that got no complete answer, as facts: where, which kind, in which words; retry.ts decides what next. */
import type { RequestError } from './errors.js';
import { describeFailure, failure, type BuiltKind, type LastFailure, type NetworkFailureClass } from './failures.js';
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

const TIMEOUT_WORDS: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'no connection',
  UND_ERR_HEADERS_TIMEOUT: 'no answer',
  UND_ERR_BODY_TIMEOUT: 'the answer stopped coming',
  ETIMEDOUT: 'no connection',
};

const NOT_TRUSTED = 'its certificate is not trusted';
const OLD_TLS = 'it offers only TLS older than 1.2, which prospect refuses';
const NO_CLIENT_CERTIFICATE = 'it asks for a client certificate, which prospect does not send';

/** Certificate and TLS-version failures, each final: its kind, and what is wrong in words. */
const TLS_PROBLEMS: Record<string, readonly [BuiltKind, string]> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: ['tls_untrusted', NOT_TRUSTED],
  UNABLE_TO_GET_ISSUER_CERT: ['tls_untrusted', NOT_TRUSTED],
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: ['tls_untrusted', NOT_TRUSTED],
  SELF_SIGNED_CERT_IN_CHAIN: ['tls_untrusted', `${NOT_TRUSTED} (a self-signed CA)`],
  DEPTH_ZERO_SELF_SIGNED_CERT: ['tls_untrusted', 'its certificate is self-signed and not trusted'],
  CERT_UNTRUSTED: ['tls_untrusted', NOT_TRUSTED],
  CERT_SIGNATURE_FAILURE: ['tls_untrusted', 'its certificate has a bad signature'],
  CERT_HAS_EXPIRED: ['tls_expired', 'its certificate has expired'],
  CERT_NOT_YET_VALID: ['tls_not_yet_valid', 'its certificate is not valid yet'],
  ERR_TLS_CERT_ALTNAME_INVALID: ['tls_hostname', 'its certificate is for another host name'],
  ERR_SSL_WRONG_VERSION_NUMBER: ['tls_not_tls', 'it does not speak TLS on this port'],
  ERR_SSL_UNSUPPORTED_PROTOCOL: ['tls_old_version', OLD_TLS],
  ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION: ['tls_old_version', OLD_TLS],
  ERR_SSL_NO_PROTOCOLS_AVAILABLE: ['tls_old_version', OLD_TLS],
  ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED: ['tls_client_certificate', NO_CLIENT_CERTIFICATE],
};

/** undici's codes for an error that wraps the one that says what happened (its cause). */
const WRAPPER_CODES = new Set(['UND_ERR_CONNECT', 'UND_ERR_ABORTED', 'UND_ERR_PRX_TLS']);

/** The code that says what happened; a TLS alert anywhere wins (TLS 1.3 reports a missing client cert late). */
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

/** The error and what it wraps, outermost first: its cause, or an AggregateError's first (happy eyeballs). */
function causes(error: unknown): object[] {
  const chain: object[] = [];
  for (let each = error; each !== null && typeof each === 'object' && chain.length < 8;) {
    chain.push(each);
    const errors = (each as { errors?: unknown }).errors;
    each = Array.isArray(errors) ? errors[0] : (each as { cause?: unknown }).cause;
  }
  return chain;
}

/** `timedOut`: the attempt's deadline fired; `connectTimeoutMs`: the connection's own, shorter limit. */
interface TransportFacts {
  timedOut: boolean;
  timeoutMs: number;
  connectTimeoutMs?: number | undefined;
  /** The API key, only so it can be redacted from undici's message. */
  secret: string;
  baseUrl: URL;
  /** The proxy requests go through, if any: then every connection is to it. */
  proxy?: URL | undefined;
}

type Final = { kind: 'final'; error: RequestError | Error };
const final = (error: RequestError | Error): Final => ({ kind: 'final', error });

/** `api.example.com:443`: the host and port a request goes to, the default port written out. */
export function hostAndPort(url: URL): string {
  return `${url.hostname}:${portOf(url)}`;
}

export function describeTransportFailure(error: unknown, facts: TransportFacts): LastFailure | Final {
  const code = errorCode(error);
  const where = hostAndPort(facts.baseUrl);
  const verdict = classifyTransportFailure(code, facts.timedOut);
  if (verdict === 'timeout') {
    const connecting = !facts.timedOut && code === 'UND_ERR_CONNECT_TIMEOUT';
    return {
      kind: 'timeout',
      timeoutMs: connecting ? (facts.connectTimeoutMs ?? facts.timeoutMs) : facts.timeoutMs,
      where: facts.proxy && connecting ? proxyWhere(facts.proxy) : where,
      words: code !== undefined ? TIMEOUT_WORDS[code] : undefined,
      connecting,
      cause: error,
    };
  }
  const message =
    error instanceof Error ? redact(error.message, facts.secret).replace(/\s+/g, ' ').trim() : String(error);
  // A bug in how prospect called undici: a plain Error, which the CLI reports as an internal error.
  if (verdict === 'bug') return final(new Error(`invalid request to the service: ${message}`, { cause: error }));
  if (verdict === 'final' && code !== undefined && isTlsFailureCode(code)) {
    // dispatcher.ts marks a failure met on the way to the proxy, not to the service.
    const atProxy =
      facts.proxy !== undefined && causes(error).some((each) => (each as Record<symbol, unknown>)[AT_PROXY] === true);
    return final(tlsError(atProxy ? proxyWhere(facts.proxy!) : where, code, error));
  }
  const proxyStatus = /Proxy response \((\d{3})\)|Proxy Authentication Required \((\d{3})\)/.exec(message);
  if (facts.proxy !== undefined && proxyStatus)
    return proxyRefusal(facts.proxy, where, Number(proxyStatus[1] ?? proxyStatus[2]), error);
  const [failureClass, words] = NETWORK_WORDS[code ?? ''] ?? ['connection', message || 'network error'];
  const description = code !== undefined ? `${words} (${code})` : words;
  // Through a proxy, every connection is to the proxy: a refused or unknown host is the proxy's.
  if (facts.proxy !== undefined && (failureClass === 'refused' || failureClass === 'DNS'))
    return { kind: 'network', failureClass: 'proxy', where: proxyWhere(facts.proxy), description, cause: error };
  const last = { kind: 'network', failureClass, where, description, cause: error } as const;
  if (verdict !== 'final') return last;
  return final(
    failure('unreachable', { reason: description, code, cause: error }, { where, what: describeFailure(last) }),
  );
}

function proxyWhere(proxy: URL): string {
  return `the proxy ${describeProxy(proxy).replace(/^https?:\/\//, '')}`;
}

function tlsError(where: string, code: string, cause: unknown): RequestError {
  const [kind, what] = TLS_PROBLEMS[code] ?? ['tls_failed', 'the TLS handshake failed'];
  return failure(kind, { reason: what, code, cause }, { where, what });
}

/** A proxy's refusal of a tunnel: final where no retry can help, else the proxy could not reach the service. */
function proxyRefusal(proxy: URL, where: string, status: number, cause: unknown): Final | LastFailure {
  const words = { proxy: describeProxy(proxy), where };
  // squid's `X-Squid-Error: ERR_DNS_FAIL 0`: the proxy found no such host, a misspelling no retry fixes.
  const refusal = causes(cause).find((each): each is TunnelRefusedError => each instanceof TunnelRefusedError);
  const header = refusal?.headers['x-squid-error'];
  if (/^ERR_DNS_FAIL(?![A-Z_])/.test((Array.isArray(header) ? header[0] : header) ?? '')) {
    const init = { status, code: 'proxy_dns_failure', reason: 'host not found by the proxy', cause };
    return final(failure('proxy_dns', init, words));
  }
  if (status === 407) {
    const init = { status, code: 'proxy_auth', details: { credentials_given: proxy.username !== '' }, cause };
    return final(failure('proxy_auth', init, words));
  }
  if (status === 403) return final(failure('proxy_refused', { status, code: 'proxy_refused', cause }, words));
  // 502, 503, 504: the proxy could not reach the service; perhaps later it can.
  const description = `the proxy ${words.proxy} could not connect to it (${status})`;
  return { kind: 'network', failureClass: 'proxy', where, description, cause };
}

/** A TLS failure met outside a request (a diagnostic handshake), said as a request says it; else undefined. */
export function tlsFailureError(error: unknown, baseUrl: URL): RequestError | undefined {
  const code = errorCode(error);
  if (code === undefined || !isTlsFailureCode(code)) return undefined;
  return tlsError(hostAndPort(baseUrl), code, error);
}
