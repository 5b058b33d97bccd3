/** Errors as facts, never CLI advice. Imports nothing: the CLI's start, which maps errors, loads no HTTP code. */

/** Every way a request can fail; failures.ts has the message of each, src/exit-codes.ts the CLI's advice. */
export type FailureKind = StatusKind | GivenUpKind | FinalKind;
/** The service answered a status that ends the request. */
type StatusKind = RefusalKind | 'not_found' | 'redirect' | 'client_certificate' | 'unavailable' | 'unexpected_status';
type RefusalKind =
  'auth' | 'plan' | 'forbidden' | 'unanswerable' | 'refused_value' | 'unreadable_refusal' | 'bad_request';
/** Given up on after retries: rate limits, or named by the last failure. */
type GivenUpKind = 'rate_limited' | 'wait_too_long' | 'status' | 'answer_lost' | NoAnswerKind;
type NoAnswerKind = 'dns' | 'refused' | 'connection' | 'proxy_unreachable' | 'timeout' | 'connecting';
/** Final at once: asking again would meet the same host, certificate, proxy or bytes. */
type FinalKind = 'unreachable' | TlsKind | ProxyKind | 'answer_refused' | 'malformed' | 'aborted';
type TlsKind = CertificateKind | 'tls_not_tls' | 'tls_old_version' | 'tls_client_certificate' | 'tls_failed';
type CertificateKind = 'tls_untrusted' | 'tls_expired' | 'tls_not_yet_valid' | 'tls_hostname';
type ProxyKind = 'proxy_dns' | 'proxy_auth' | 'proxy_refused';

/** The facts a RequestError is built from; the kind defaults to its class's own. */
export type RequestErrorInit = Partial<Omit<RequestError, keyof Error>> & { cause?: unknown };

/** A request to the service failed: what the service or the network said. */
export class RequestError extends Error {
  static readonly kind: FailureKind = 'unexpected_status';
  readonly kind: FailureKind;
  /** What went wrong, in the service's words when it gave any (redacted); default: the message. */
  declare readonly reason: string;
  declare readonly status?: number | undefined;
  /** The service's machine-readable code, e.g. `plan_required`; `network` or `timeout` for a transport failure. */
  declare readonly code?: string | undefined;
  /** Extra fields of the error body (`suggestions`, `valid_values`, `retry_after`, ...), and `cap_bytes` and such. */
  declare readonly details: Readonly<Record<string, unknown>>;
  /** The endpoint as the user knows it, e.g. `/companies`. */
  declare readonly endpoint?: string | undefined;
  /** `host:port` of the service asked; set by the client on every error a request ends in. */
  declare readonly host?: string | undefined;
  declare readonly attempts?: number | undefined;
  /** Whether asking again later may succeed (an outage, a rate limit), as opposed to a request that is wrong. */
  declare readonly retryable: boolean;
  /** Advice of the contract's own checks (body-check, paging, contacts-answer): the setting to use. */
  declare readonly hint?: string | undefined;

  constructor(message: string, init: RequestErrorInit = {}) {
    super(message);
    this.name = 'RequestError';
    const { cause, ...facts } = init;
    const known = Object.entries(facts).filter(([, value]) => value !== undefined);
    Object.assign(this, { reason: message, details: {}, retryable: false }, Object.fromEntries(known));
    this.kind = init.kind ?? (new.target as typeof RequestError).kind;
    // Non-enumerable like the standard `cause`, so JSON.stringify(error) never serialises a transport error.
    if (cause !== undefined) Object.defineProperty(this, 'cause', { value: cause, configurable: true, writable: true });
  }
}

/** 422: the service would not answer (unknown technology, filters that match nobody, ...). */
export class UnanswerableError extends RequestError {
  static override readonly kind = 'unanswerable';
  override readonly name = 'UnanswerableError';
}
/** 401 or 403: the key is unknown, or its plan lacks the endpoint. */
export class AuthError extends RequestError {
  static override readonly kind = 'auth';
  override readonly name = 'AuthError';
}
/** 400 or 404: the request itself is wrong (a parameter, a cursor, the base URL's path). */
export class BadRequestError extends RequestError {
  static override readonly kind = 'bad_request';
  override readonly name = 'BadRequestError';
}
/** The service or the network failed (after retries), redirected, or refused oddly. */
export class ServiceError extends RequestError {
  static override readonly kind = 'unavailable';
  override readonly name = 'ServiceError';
}
/** The service answered something that is not what the contract describes. */
export class MalformedResponseError extends RequestError {
  static override readonly kind = 'malformed';
  override readonly name = 'MalformedResponseError';
}
/** The caller's AbortSignal fired (SIGINT). */
export class AbortedError extends RequestError {
  static override readonly kind = 'aborted';
  override readonly name = 'AbortedError';

  constructor(endpoint?: string) {
    super('interrupted before the service answered', { reason: 'aborted', endpoint });
  }
}

/** createClient was given options it cannot work with (an unsafe base URL, an empty key, a number out of range). */
export class ClientOptionError extends Error {
  override readonly name = 'ClientOptionError';

  constructor(
    message: string,
    readonly hint?: string,
    /** What is wrong, for the CLI's own advice (`no_api_key`, `credentials_in_base_url`). */
    readonly code?: string,
  ) {
    super(message);
  }
}
