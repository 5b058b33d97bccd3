/** THE words of failures: each kind's class and message and a last attempt's; src/exit-codes.ts keys advice by kind. */
import { STATUS_CODES } from 'node:http';
import {
  AuthError,
  BadRequestError,
  MalformedResponseError,
  RequestError,
  ServiceError,
  UnanswerableError,
  type FailureKind,
  type RequestErrorInit,
} from './errors.js';

/** Facts a message is made of beyond those the error keeps. */
export interface MessageFacts {
  /** `host:port`, `the proxy host:port`, or a redirect's target. */
  where?: string | undefined;
  /** The service's own reason, when it gave one (redacted, one line). */
  said?: string | undefined;
  /** The code as the service sent it: a 422's may be read as another of the contract's. */
  serviceCode?: string | undefined;
  /** What went wrong in words: a TLS problem, the last failure given up on, a body's problem. */
  what?: string | undefined;
  /** The proxy, as `http://host:port`. */
  proxy?: string | undefined;
  waitMs?: number;
  maxWaitMs?: number;
}

type FailureFacts = RequestErrorInit & MessageFacts;
type Message = (facts: FailureFacts) => string;

const said = (facts: FailureFacts) => (facts.said !== undefined ? `: ${facts.said}` : '');
const statusOf = (facts: FailureFacts) => describeStatus(facts.status ?? 0, facts.serviceCode);
const code422 = (facts: FailureFacts) => `422${facts.serviceCode ? ` ${facts.serviceCode}` : ''}`;
const service = (where = '') => (where.startsWith('the proxy ') ? where : `the service at ${where}`);
const gaveUp: Message = (facts) =>
  `no answer from ${facts.where} for ${facts.endpoint} after ${facts.attempts} ` +
  `${facts.attempts === 1 ? 'attempt' : 'attempts'} (last: ${facts.what})`;
const untrusted: Message = (facts) => `cannot trust ${service(facts.where)}: ${facts.what} (TLS: ${facts.code})`;
const refusal: Message = (f) => `the service would not answer this request (${code422(f)}): ${f.said}`;

/** `aborted` is AbortedError's own: its message needs no facts. */
export type BuiltKind = Exclude<FailureKind, 'aborted'>;

const FAILURES: { readonly [K in BuiltKind]: readonly [typeof RequestError, Message] } = {
  auth: [AuthError, () => 'the service rejected the API key (401 unauthorized).'],
  plan: [
    AuthError,
    (facts) =>
      facts.endpoint === '/contacts'
        ? 'the contacts endpoint needs the Growth plan or higher; ' +
          "this key's plan does not include it (403 plan_required)."
        : `this key's plan does not include ${facts.endpoint} (403 plan_required)${said(facts)}`,
  ],
  forbidden: [AuthError, (f) => `the service refused this key access to ${f.endpoint} (${statusOf(f)})${said(f)}`],
  unanswerable: [UnanswerableError, refusal],
  refused_value: [UnanswerableError, refusal],
  unreadable_refusal: [
    MalformedResponseError,
    (f) =>
      `the service refused the request (${code422(f)}) ` +
      `${f.said === undefined ? 'without the reason the specification promises' : `("${f.said}")`}, ` +
      'and whether nothing matched or a filter was refused cannot be read from it',
  ],
  bad_request: [BadRequestError, (f) => `the service rejected the request to ${f.endpoint} (${statusOf(f)})${said(f)}`],
  not_found: [BadRequestError, (f) => `the service has no ${f.endpoint} at this base URL (${statusOf(f)})${said(f)}`],
  redirect: [
    ServiceError,
    (f) =>
      `the service redirected${f.where !== undefined ? ` to ${f.where}` : ''} (${describeStatus(f.status ?? 0)}); ` +
      'prospect does not follow redirects with your key',
  ],
  client_certificate: [
    ServiceError,
    (f) => `the service at this base URL asks for a client certificate, which prospect does not send (400: ${f.what})`,
  ],
  unavailable: [ServiceError, (f) => `the service failed to answer ${f.endpoint} (${statusOf(f)})${said(f)}`],
  // Any other status (405, 409, 413, 2xx oddities...): prospect and the service disagree about the protocol.
  unexpected_status: [
    ServiceError,
    (f) => `the service refused the request to ${f.endpoint} (${statusOf(f)})${said(f)}`,
  ],
  rate_limited: [
    ServiceError,
    (f) =>
      `${f.where} kept refusing ${f.endpoint} as over its rate limit (rate limit: 429 after ${f.attempts} attempts, ` +
      'each after the wait it asked for)',
  ],
  wait_too_long: [
    ServiceError,
    (f) =>
      `the service asked to wait ${formatSeconds(f.waitMs ?? 0)} before asking ${f.endpoint} again ` +
      `(${f.status === 429 ? 'rate limit: ' : ''}${statusOf(f)}), ` +
      `longer than prospect waits (${formatSeconds(f.maxWaitMs ?? 0)}); try again later`,
  ],
  status: [ServiceError, gaveUp],
  dns: [ServiceError, gaveUp],
  refused: [ServiceError, gaveUp],
  connection: [ServiceError, gaveUp],
  proxy_unreachable: [ServiceError, gaveUp],
  timeout: [ServiceError, gaveUp],
  connecting: [ServiceError, gaveUp],
  answer_lost: [ServiceError, gaveUp],
  unreachable: [ServiceError, (f) => `cannot reach the service at ${f.where} (${f.what})`],
  tls_untrusted: [ServiceError, untrusted],
  tls_expired: [ServiceError, untrusted],
  tls_not_yet_valid: [ServiceError, untrusted],
  tls_hostname: [ServiceError, untrusted],
  tls_not_tls: [ServiceError, untrusted],
  tls_old_version: [ServiceError, untrusted],
  tls_failed: [ServiceError, untrusted],
  tls_client_certificate: [ServiceError, (f) => `cannot connect to ${service(f.where)}: ${f.what} (TLS: ${f.code})`],
  proxy_dns: [
    ServiceError,
    (f) => `the proxy ${f.proxy} found no host ${f.where?.replace(/:\d+$/, '')} (${f.status} ERR_DNS_FAIL)`,
  ],
  proxy_auth: [ServiceError, (f) => `the proxy ${f.proxy} asks for credentials (407 Proxy Authentication Required)`],
  proxy_refused: [ServiceError, (f) => `the proxy ${f.proxy} refused to connect to ${f.where} (403)`],
  answer_refused: [ServiceError, (f) => `${f.what}, for ${f.endpoint}; it was not read further and not asked again`],
  malformed: [MalformedResponseError, (f) => `the service at ${f.where} answered ${f.endpoint} with ${f.what}`],
};

export function failure(kind: BuiltKind, init: RequestErrorInit, words: MessageFacts = {}): RequestError {
  const [ErrorClass, message] = FAILURES[kind];
  return new ErrorClass(message({ ...init, ...words }), { ...init, kind });
}

/** `503 internal_error` when the service gave a code, `503 Service Unavailable` otherwise. */
function describeStatus(status: number, code?: string): string {
  return `${status} ${code ?? STATUS_CODES[status] ?? 'unknown status'}`;
}

/** `150 ms`, `2 s`, `2.5 s`: short waits in ms so a 150 ms timeout does not read as "0.1 s". */
function formatSeconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}

/** The kind of a failure that got no answer, as messages name it. */
export type NetworkFailureClass = 'DNS' | 'refused' | 'proxy' | 'connection';

/** What the last failed attempt was, for the "after N attempts (last: ...)" message. */
export type LastFailure =
  | { kind: 'status'; error: RequestError }
  | { kind: 'network'; failureClass: NetworkFailureClass; where: string; description: string; cause?: unknown }
  /** `connecting`: the connection (TCP and TLS) did not open in time, the connect timeout, not the attempt's. */
  | { kind: 'timeout'; timeoutMs: number; where: string; words?: string; connecting?: boolean; cause?: unknown }
  /** A 2xx arrived, so the request reached the service (a paid call may be charged), but its body was lost. */
  | { kind: 'lost'; status: number; where: string; description: string; cause?: unknown };

export function describeFailure(failure: LastFailure): string {
  switch (failure.kind) {
    case 'status': {
      const { status, code, reason } = failure.error;
      return describeStatus(status ?? 0, code) + (reason ? ` "${reason}"` : '');
    }
    case 'network':
      return `${failure.failureClass}: ${failure.description}`;
    case 'timeout':
      return `timeout: ${failure.words ?? 'no complete answer'} within ${formatSeconds(failure.timeoutMs)}`;
    case 'lost':
      return `answer lost: ${failure.status} arrived but ${failure.description}`;
  }
}
