/**
 * Errors of the API client. They carry what happened over HTTP (status, the service's code and
 * reason, whether asking again later may help), never what the CLI does about it: the CLI maps them
 * to exit codes at its edge (exitCodeOf in src/exit-codes.ts). Each class names one kind of failure;
 * error-responses.ts builds them from what the service answered.
 *
 * Messages are sentences for a person, without a `prospect:` prefix: whoever shows them adds it.
 * This module imports nothing, so the CLI's start (which maps errors) loads no HTTP code.
 */
export interface RequestErrorInit {
  /** What went wrong, in the service's words when it gave any (already redacted); default: the message. */
  reason?: string | undefined;
  status?: number | undefined;
  /** The service's machine-readable code, e.g. `plan_required`; `network` or `timeout` for a transport failure. */
  code?: string | undefined;
  /** Extra fields of the error body (`suggestions`, `valid_values`, `retry_after`, ...). */
  details?: Record<string, unknown>;
  /** The endpoint as the user knows it, e.g. `/companies`. */
  endpoint?: string | undefined;
  /** `host:port` of the service asked; set by the client on every error a request ends in. */
  host?: string | undefined;
  /** How many HTTP attempts were made before giving up. */
  attempts?: number | undefined;
  /** Whether asking again later may succeed (an outage, a rate limit), as opposed to a request that is wrong. */
  retryable?: boolean;
  hint?: string | undefined;
  cause?: unknown;
}

/** A request to the service failed: what the service or the network said. */
export class RequestError extends Error {
  readonly status?: number;
  readonly code?: string;
  readonly reason: string;
  readonly details: Readonly<Record<string, unknown>>;
  readonly endpoint?: string;
  readonly host?: string;
  readonly attempts?: number;
  readonly retryable: boolean;
  readonly hint?: string;

  constructor(message: string, init: RequestErrorInit = {}) {
    super(message);
    this.name = 'RequestError';
    this.reason = init.reason ?? message;
    this.details = init.details ?? {};
    this.retryable = init.retryable ?? false;
    if (init.status !== undefined) this.status = init.status;
    if (init.code !== undefined) this.code = init.code;
    if (init.endpoint !== undefined) this.endpoint = init.endpoint;
    if (init.host !== undefined) this.host = init.host;
    if (init.attempts !== undefined) this.attempts = init.attempts;
    if (init.hint !== undefined) this.hint = init.hint;
    // Non-enumerable like the standard `cause`, so JSON.stringify(error) never serialises a
    // transport error object.
    if (init.cause !== undefined) {
      Object.defineProperty(this, 'cause', {
        value: init.cause,
        enumerable: false,
        configurable: true,
        writable: true,
      });
    }
  }
}

/** 422: the service would not answer (unknown technology, filters that match nobody, ...). */
export class UnanswerableError extends RequestError {
  override readonly name = 'UnanswerableError';
}
/** 401 or 403: the key is unknown, or its plan lacks the endpoint. */
export class AuthError extends RequestError {
  override readonly name = 'AuthError';
}
/** 400 or 404: the request itself is wrong (a parameter, a cursor, the base URL's path). */
export class BadRequestError extends RequestError {
  override readonly name = 'BadRequestError';
}
/** The service or the network failed (after retries), redirected, or refused oddly. */
export class ServiceError extends RequestError {
  override readonly name = 'ServiceError';
}
/** The service answered something that is not what the contract describes. */
export class MalformedResponseError extends RequestError {
  override readonly name = 'MalformedResponseError';
}

/** The caller's AbortSignal fired (SIGINT). */
export class AbortedError extends RequestError {
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
