/**
 * A request that got no complete answer (no such host, refused, reset, cut short, timed out, a TLS
 * or proxy failure), described in words a person can act on: where (host:port), which kind of
 * failure, and what to do. Whether it is worth another attempt is retry.ts's decision.
 */
import type { LastFailure, NetworkFailureClass } from './error-responses.js';
import { redact } from '../util/redact.js';
import { RequestError, ServiceError } from './errors.js';
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

const UNTRUSTED_HINT = 'Trust the certificate of the CA that signed it (the client option `ca`).';

/** Certificate and TLS-version failures: each is final, said with what is wrong and how to fix it. */
const TLS_PROBLEMS: Record<string, { what: string; hint: string }> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: { what: 'its certificate is not trusted', hint: UNTRUSTED_HINT },
  UNABLE_TO_GET_ISSUER_CERT: { what: 'its certificate is not trusted', hint: UNTRUSTED_HINT },
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: { what: 'its certificate is not trusted', hint: UNTRUSTED_HINT },
  SELF_SIGNED_CERT_IN_CHAIN: { what: 'its certificate is not trusted (a self-signed CA)', hint: UNTRUSTED_HINT },
  DEPTH_ZERO_SELF_SIGNED_CERT: { what: 'its certificate is self-signed and not trusted', hint: UNTRUSTED_HINT },
  CERT_UNTRUSTED: { what: 'its certificate is not trusted', hint: UNTRUSTED_HINT },
  CERT_SIGNATURE_FAILURE: { what: 'its certificate has a bad signature', hint: UNTRUSTED_HINT },
  CERT_HAS_EXPIRED: {
    what: 'its certificate has expired',
    hint: "The service must renew its certificate; if it has, check this machine's clock (`date`).",
  },
  CERT_NOT_YET_VALID: {
    what: 'its certificate is not valid yet',
    hint: "Check this machine's clock (`date`); otherwise the service must fix its certificate.",
  },
  ERR_TLS_CERT_ALTNAME_INVALID: {
    what: 'its certificate is for another host name',
    hint:
      'Use the host name the certificate names in the base URL (check for a typo or an IP address in ' +
      'place of the name).',
  },
  ERR_SSL_WRONG_VERSION_NUMBER: {
    what: 'it does not speak TLS on this port',
    hint: 'Check the base URL: the port, and https:// against http://.',
  },
  ERR_SSL_UNSUPPORTED_PROTOCOL: {
    what: 'it offers only TLS older than 1.2, which prospect refuses',
    hint: 'The service must enable TLS 1.2 or 1.3.',
  },
  ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION: {
    what: 'it offers only TLS older than 1.2, which prospect refuses',
    hint: 'The service must enable TLS 1.2 or 1.3.',
  },
  ERR_SSL_NO_PROTOCOLS_AVAILABLE: {
    what: 'it offers only TLS older than 1.2, which prospect refuses',
    hint: 'The service must enable TLS 1.2 or 1.3.',
  },
  ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED: {
    what: 'it asks for a client certificate, which prospect does not send',
    hint: 'prospect does not support client certificates; ask for API-key access without one.',
  },
};

/** undici's codes for an error that wraps the one that says what happened (its cause). */
const WRAPPER_CODES = new Set(['UND_ERR_CONNECT', 'UND_ERR_ABORTED', 'UND_ERR_PRX_TLS']);

/**
 * The code that says what happened. A TLS alert anywhere in the chain wins: under TLS 1.3 a server
 * that demands a client certificate says so after the handshake, and undici reports the closed socket.
 */
function errorCode(error: unknown): string | undefined {
  const tls = causes(error)
    .map((each) => ((tlsAlertBehind(each) ?? each) as { code?: unknown }).code)
    .find((code): code is string => typeof code === 'string' && isTlsFailureCode(code));
  return tls ?? outermostCode(error);
}

/** The error and what it wraps (cause, and the first of an AggregateError), outermost first. */
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

function outermostCode(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && !WRAPPER_CODES.has(code)) return code;
  // Happy-eyeballs connects (localhost → ::1 and 127.0.0.1) fail with an AggregateError.
  const first = (error as { errors?: unknown }).errors;
  if (Array.isArray(first)) return outermostCode(first[0]);
  const cause = (error as { cause?: unknown }).cause;
  return cause !== undefined ? outermostCode(cause) : typeof code === 'string' ? code : undefined;
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
    return {
      kind: 'final',
      error: tlsError(atProxy ? proxyWhere(facts.proxy!) : where, code, tlsProblem(code), error),
    };
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
    return {
      kind: 'final',
      error: new ServiceError(`cannot reach the service at ${where} (${failureClass}: ${description})`, {
        reason: description,
        code,
        hint: 'Check the host name in the base URL; behind a proxy, the proxy must be set.',
        cause: error,
      }),
    };
  }
  return { kind: 'network', failureClass, where, description, cause: error };
}

function proxyWhere(proxy: URL): string {
  return `the proxy ${describeProxy(proxy).replace(/^https?:\/\//, '')}`;
}

function tlsProblem(code: string): { what: string; hint: string } {
  return (
    TLS_PROBLEMS[code] ?? {
      what: 'the TLS handshake failed',
      hint: 'Check the certificate and TLS settings in effect.',
    }
  );
}

function tlsError(where: string, code: string, problem: { what: string; hint: string }, cause: unknown): ServiceError {
  const whom = where.startsWith('the proxy ') ? where : `the service at ${where}`;
  const verb = code === 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED' ? 'cannot connect to' : 'cannot trust';
  return new ServiceError(`${verb} ${whom}: ${problem.what} (TLS: ${code})`, {
    reason: problem.what,
    code,
    hint: problem.hint,
    // What the caller's advice turns on: a CA to trust, or settings to look at.
    details: {
      tls_problem: problem.hint === UNTRUSTED_HINT ? 'untrusted' : code in TLS_PROBLEMS ? 'known' : 'unknown',
    },
    cause,
  });
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
): { kind: 'final'; error: ServiceError } | LastFailure {
  const proxyName = describeProxy(proxy);
  // The proxy looked the name up and found nothing: a misspelt host, which no retry fixes.
  if (proxyError === 'ERR_DNS_FAIL') {
    return {
      kind: 'final',
      error: new ServiceError(
        `the proxy ${proxyName} found no host ${where.replace(/:\d+$/, '')} (${status} ${proxyError})`,
        {
          status,
          code: 'proxy_dns_failure',
          reason: 'host not found by the proxy',
          hint: "Check the host name in the base URL; the proxy's DNS does not know it.",
          cause,
        },
      ),
    };
  }
  if (status === 407) {
    return {
      kind: 'final',
      error: new ServiceError(`the proxy ${proxyName} asks for credentials (407 Proxy Authentication Required)`, {
        status,
        code: 'proxy_auth',
        details: { credentials_given: proxy.username !== '' },
        hint:
          proxy.username !== ''
            ? 'The proxy refused the user name and password in its URL; check them.'
            : 'Put them in the proxy URL: http://user:password@host:port.',
        cause,
      }),
    };
  }
  if (status === 403) {
    return {
      kind: 'final',
      error: new ServiceError(`the proxy ${proxyName} refused to connect to ${where} (403)`, {
        status,
        code: 'proxy_refused',
        hint:
          'The proxy does not allow this host or port; ask its administrator, or add the host to NO_PROXY ' +
          'if it is reachable directly.',
        cause,
      }),
    };
  }
  // 502, 503, 504: the proxy could not reach the service; perhaps later it can.
  return {
    kind: 'network',
    failureClass: 'proxy',
    where,
    description: `the proxy ${proxyName} could not connect to it (${status})`,
    cause,
  };
}

/**
 * A certificate or TLS-version failure met outside a request (a diagnostic handshake), said as a request says
 * it; undefined for any other error.
 */
export function tlsFailureError(error: unknown, baseUrl: URL): ServiceError | undefined {
  const code = errorCode(error);
  if (code === undefined || !isTlsFailureCode(code)) return undefined;
  return tlsError(hostAndPort(baseUrl), code, tlsProblem(code), error);
}
