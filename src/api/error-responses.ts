/**
 * What the service answered, or failed to answer, made into the errors of errors.ts.
 * `errorFromResponse` is the ONE place where an HTTP status and body become an error; the request
 * loop and the client never build status errors themselves.
 *
 * Security: messages, reasons and details may quote what the service said. The service could echo
 * the API key (a proxy's error page, an "unknown key xyz" reason), so every string that comes from
 * the outside world goes through `redact` (util/redact.ts) before it lands on an error.
 */
import { STATUS_CODES } from 'node:http';
import {
  AuthError,
  BadRequestError,
  MalformedResponseError,
  RequestError,
  ServiceError,
  UnanswerableError,
  type RequestErrorInit,
} from './errors.js';
import { isRecord } from '../util/is-record.js';
import { displaySafe } from '../util/display-safe.js';
import { shorten } from '../util/text.js';
import { redact, redactDeep } from '../util/redact.js';
import { isRetryableStatus } from './retry.js';

// ---------------------------------------------------------------------------------------------
// Error bodies

export interface ParsedErrorBody {
  code?: string;
  reason?: string;
  details: Record<string, unknown>;
  /** Where the code and reason were read, when not the contract's `{"error":{…}}` (what doctor reports). */
  shape?: 'error text' | 'errors array' | 'top-level fields' | 'no JSON';
}

const MAX_REASON_LENGTH = 300;

/** Reasons go into one-line messages: collapse whitespace and keep them short. */
function oneLine(text: string): string {
  const collapsed = displaySafe(text.replace(/\s+/g, ' ')).trim();
  return shorten(collapsed, MAX_REASON_LENGTH);
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? oneLine(value) : undefined;
}

/**
 * Reads the contract's `{"error":{"code","reason",...}}` and, tolerantly, what other services send
 * (contract row 8): `{"error":"text"}`, `{"message":"text"}`, `{"code","reason"}` at top level,
 * `{"errors":[{…}]}` (the first one), RFC 9457 problem+json (`type`, `title`, `detail`), or no JSON at all
 * (then nothing is known beyond the status).
 */
export function parseErrorBody(bodyText: string): ParsedErrorBody {
  let json: unknown;
  try {
    json = JSON.parse(bodyText);
  } catch {
    return { details: {}, shape: 'no JSON' };
  }
  if (!isRecord(json)) return { details: {}, shape: 'no JSON' };

  const error = json.error;
  if (isRecord(error)) return fieldsOf(error);
  const errors = json.errors;
  if (Array.isArray(errors) && isRecord(errors[0])) {
    const { errors: _all, ...rest } = json;
    const first = fieldsOf(errors[0]);
    return { ...first, details: { ...rest, ...first.details }, shape: 'errors array' };
  }
  const parsed: ParsedErrorBody = { ...fieldsOf(json), shape: error === undefined ? 'top-level fields' : 'error text' };
  if (parsed.code === undefined && typeof error === 'string' && /^[a-z_]+$/.test(error)) parsed.code = error;
  if (parsed.reason === undefined && nonEmptyString(error) !== undefined) parsed.reason = nonEmptyString(error);
  delete parsed.details.error;
  return parsed;
}

/** Code, reason and the rest of one error object, whichever of the common field names it uses. */
function fieldsOf(error: Record<string, unknown>): ParsedErrorBody {
  const { code, reason, message, detail, title, type, status: _status, ...details } = error;
  return withoutUndefined({
    code: nonEmptyString(code) ?? codeOfProblemType(type),
    reason: nonEmptyString(reason) ?? nonEmptyString(message) ?? nonEmptyString(detail) ?? nonEmptyString(title),
    details,
  });
}

/** RFC 9457 `type`: `https://…/problems/unknown-technology` → `unknown_technology`; `about:blank` says nothing. */
function codeOfProblemType(type: unknown): string | undefined {
  if (typeof type !== 'string' || type === 'about:blank') return undefined;
  const slug = type.split(/[/#]/).filter(Boolean).at(-1) ?? '';
  const code = slug.toLowerCase().replace(/[-\s]+/g, '_');
  return /^[a-z][a-z0-9_]{0,63}$/.test(code) ? code : undefined;
}

function withoutUndefined(parsed: {
  code: string | undefined;
  reason: string | undefined;
  details: Record<string, unknown>;
}): ParsedErrorBody {
  const result: ParsedErrorBody = { details: parsed.details };
  if (parsed.code !== undefined) result.code = parsed.code;
  if (parsed.reason !== undefined) result.reason = parsed.reason;
  return result;
}

// ---------------------------------------------------------------------------------------------
// Status → error

/** `503 internal_error` when the service gave a code, `503 Service Unavailable` otherwise. */
function describeStatus(status: number, code?: string): string {
  return `${status} ${code ?? STATUS_CODES[status] ?? 'unknown status'}`;
}

export interface ResponseFacts {
  endpoint: string;
  status: number;
  bodyText: string;
  /** The `Location` header of a 3xx, resolved against the request URL. */
  location?: string | undefined;
  /** The API key, only so it can be redacted from what the service said. */
  secret?: string;
}

/**
 * The one mapping from a non-2xx HTTP answer to an error. Retryable statuses also map here: the
 * retry loop calls it to describe the last failure once it gives up.
 */
export function errorFromResponse(facts: ResponseFacts): RequestError {
  const { endpoint, status, secret } = facts;
  const body = parseErrorBody(redact(facts.bodyText, secret));
  const details = redactDeep(body.details, secret) as Record<string, unknown>;
  const init: RequestErrorInit = {
    endpoint,
    status,
    reason: body.reason ?? (STATUS_CODES[status] ?? 'unknown status').toLowerCase(),
    details: body.shape === undefined ? details : { ...details, error_body_shape: body.shape },
    code: body.code,
    retryable: isRetryableStatus(status),
  };
  const said = body.reason !== undefined ? `: ${body.reason}` : '';
  const statusText = describeStatus(status, body.code);

  if (status >= 300 && status <= 399) return redirectError(facts, init);
  if (status === 400 && asksForClientCertificate(facts.bodyText)) {
    return new ServiceError(
      `the service at this base URL asks for a client certificate, which prospect does not send (400: ` +
        `${CLIENT_CERTIFICATE_PAGE.exec(facts.bodyText)?.[0]})`,
      {
        ...init,
        retryable: false,
        code: 'client_certificate_required',
        hint:
          'prospect does not support client certificates; ask for API-key access without one, or reach ' +
          'the service another way.',
      },
    );
  }
  if (status === 401) {
    return new AuthError('the service rejected the API key (401 unauthorized).', {
      ...init,
      hint: 'Check the key, and that it is for this service.',
    });
  }
  if (status === 403) return forbiddenError(endpoint, body, init, said);
  if (status === 422) return unanswerableError(body, init);
  if (status === 400) {
    return new BadRequestError(`the service rejected the request to ${endpoint} (${statusText})${said}`, init);
  }
  if (status === 404) {
    return new BadRequestError(`the service has no ${endpoint} at this base URL (${statusText})${said}`, {
      ...init,
      hint: 'Check the base URL: it is the service root, without /api/v1.',
    });
  }
  if (isRetryableStatus(status)) {
    return new ServiceError(`the service failed to answer ${endpoint} (${statusText})${said}`, init);
  }
  // Any other status (405, 409, 413, 2xx oddities...) means prospect and the service disagree
  // about the protocol, not that the user's input is wrong: exit 5, not 2.
  return new ServiceError(`the service refused the request to ${endpoint} (${statusText})${said}`, init);
}

/** The page a TLS terminator (nginx) answers when the client sent no certificate it required. */
const CLIENT_CERTIFICATE_PAGE = /No required SSL certificate was sent|The SSL certificate error/i;

/** Not the service's JSON error but a TLS terminator's page about a missing client certificate. */
function asksForClientCertificate(bodyText: string): boolean {
  return !/^\s*[{[]/.test(bodyText) && CLIENT_CERTIFICATE_PAGE.test(bodyText);
}

function redirectError(facts: ResponseFacts, init: RequestErrorInit): ServiceError {
  const target = facts.location !== undefined ? originOf(facts.location) : undefined;
  const where = target !== undefined ? ` to ${redact(target, facts.secret)}` : '';
  return new ServiceError(
    `the service redirected${where} (${describeStatus(facts.status)}); prospect does not follow redirects ` +
      `with your key`,
    { ...init, hint: 'Use the final address as the base URL if you trust it.' },
  );
}

function originOf(location: string): string | undefined {
  try {
    return new URL(location).origin;
  } catch {
    return undefined;
  }
}

function forbiddenError(endpoint: string, body: ParsedErrorBody, init: RequestErrorInit, said: string): AuthError {
  if (body.code === 'plan_required') {
    const message =
      endpoint === '/contacts'
        ? "the contacts endpoint needs the Growth plan or higher; this key's plan does not include it (403 " +
          'plan_required).'
        : `this key's plan does not include ${endpoint} (403 plan_required)${said}`;
    return new AuthError(message, {
      ...init,
      hint: 'Use a key on a plan that includes this endpoint.',
    });
  }
  return new AuthError(
    `the service refused this key access to ${endpoint} (${describeStatus(403, body.code)})${said}`,
    init,
  );
}

/** The 422 codes of the contract (row 7): the CLI reads all but `no_match` as input errors. */
const CONTRACT_422_CODES: ReadonlySet<string> = new Set([
  'no_match',
  'unknown_technology',
  'unknown_country',
  'unknown_employee_range',
  'contradictory_filters',
]);

/**
 * A 422 from a service that words it otherwise, read as the contract's code (docs/api-contract.md, row 7c):
 * suggestions, valid values, or words that refuse a value ("unknown", "not found", "invalid", "did you mean")
 * make it an input error, of the filter its text names; words of an empty result ("no match", "no results")
 * make it `no_match`. Input first: a misspelt name must never read as "nobody matched". Undefined: cannot tell.
 */
function contractCodeOf422(body: ParsedErrorBody): string | undefined {
  if (body.code !== undefined && CONTRACT_422_CODES.has(body.code)) return body.code;
  const text = `${body.code ?? ''} ${body.reason ?? ''}`.toLowerCase().replace(/_/g, ' ');
  const listsValues = [body.details.suggestions, body.details.valid_values].some(
    (value) => Array.isArray(value) && value.length > 0,
  );
  if (
    listsValues ||
    /\b(unknown|not found|no such|not recogni[sz]ed|did you mean|invalid|not a valid|unsupported|not supported)\b/.test(
      text,
    )
  ) {
    if (/countr/.test(text)) return 'unknown_country';
    if (/employee|range|size/.test(text)) return 'unknown_employee_range';
    return 'unknown_technology';
  }
  if (/\b(no match|no matches|no results?|nothing matched|no companies|matched nobody|no records)\b/.test(text))
    return 'no_match';
  return undefined;
}

/**
 * The spec promises a reason with every 422. Without one, or without a code the client can read as the
 * contract's, nobody can tell "the filter matched nobody" from a misspelt name or a broken service, so it
 * is a malformed answer (exit 5), never exit 3 that a cron job would read as "nobody matched this week".
 */
function unanswerableError(body: ParsedErrorBody, init: RequestErrorInit): UnanswerableError | MalformedResponseError {
  const codeText = body.code !== undefined ? ` ${body.code}` : '';
  const code = contractCodeOf422(body);
  if (body.reason === undefined || code === undefined) {
    const said = body.reason === undefined ? 'without the reason the specification promises' : `("${body.reason}")`;
    return new MalformedResponseError(
      `the service refused the request (422${codeText}) ${said}, and whether nothing matched or a filter ` +
        'was refused cannot be read from it',
      {
        ...init,
        code: body.code,
        hint:
          'This is the service breaking its contract, or wording its errors in a way prospect does not read; ' +
          'check the filters, and report it to the service if it persists.',
      },
    );
  }
  // The sandbox (and perhaps the real service) already names its suggestions in the reason: say them once.
  const hint = suggestionsAlreadyIn(body.reason, body.details) ? undefined : hintFromDetails(body.details);
  const serviceCode = code !== body.code && body.code !== undefined ? { service_code: body.code } : {};
  return new UnanswerableError(`the service would not answer this request (422${codeText}): ${body.reason}`, {
    ...init,
    code,
    details: { ...init.details, ...serviceCode },
    hint,
  });
}

function suggestionsAlreadyIn(reason: string, details: Record<string, unknown>): boolean {
  const listed = [details.suggestions, details.valid_values].find(
    (value) => Array.isArray(value) && value.length > 0,
  ) as unknown[] | undefined;
  return listed !== undefined && listed.every((item) => reason.includes(String(item)));
}

/** `suggestions` and `valid_values` (contract row 7) become a hint the user can act on. */
function hintFromDetails(details: Record<string, unknown>): string | undefined {
  const list = (value: unknown): string | undefined =>
    Array.isArray(value) && value.length > 0 ? value.map((item) => displaySafe(String(item))).join(', ') : undefined;
  const suggestions = list(details.suggestions);
  if (suggestions !== undefined) return `Closest names: ${suggestions}.`;
  const validValues = list(details.valid_values);
  if (validValues !== undefined) return `Valid values: ${validValues}.`;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Giving up after retries

/** The kind of a failure that got no answer, as messages name it. */
export type NetworkFailureClass = 'DNS' | 'refused' | 'proxy' | 'connection';

/** What the last failed attempt was, for the "after N attempts (last: ...)" message. */
export type LastFailure =
  | { kind: 'status'; error: RequestError }
  | { kind: 'network'; failureClass: NetworkFailureClass; where: string; description: string; cause?: unknown }
  | {
      kind: 'timeout';
      timeoutMs: number;
      where: string;
      words?: string | undefined;
      /** The connection (TCP and TLS) did not open in time: the connect timeout, not the attempt's. */
      connecting?: boolean;
      cause?: unknown;
    }
  /**
   * An answer lost: a 2xx arrived, so the request reached the service (and a paid call may have been
   * charged), but its body was cut, broken or stopped coming. Not a connection failure.
   */
  | { kind: 'lost'; status: number; where: string; description: string; cause?: unknown };

export function describeFailure(failure: LastFailure): string {
  switch (failure.kind) {
    case 'status':
      return (
        describeStatus(failure.error.status ?? 0, failure.error.code) +
        (failure.error.reason ? ` "${failure.error.reason}"` : '')
      );
    case 'network':
      return `${failure.failureClass}: ${failure.description}`;
    case 'timeout':
      return `timeout: ${failure.words ?? 'no complete answer'} within ${formatSeconds(failure.timeoutMs)}`;
    case 'lost':
      return `answer lost: ${failure.status} arrived but ${failure.description}`;
  }
}

/** What to do once a request has failed every attempt, by the kind of its last failure. */
const GIVE_UP_HINTS: Readonly<Record<NetworkFailureClass | 'timeout' | 'connecting' | 'lost' | 'status', string>> = {
  DNS: "Check the host name in the base URL and this machine's DNS; behind a proxy, set HTTPS_PROXY.",
  refused: "Nothing accepts connections there: check the base URL's host and port, and that the service is up.",
  timeout: 'The service is slow or unreachable: try again later, or allow each attempt longer.',
  connecting:
    "Nothing completed a connection there: check the base URL's host and port, a firewall, and whether a proxy " +
    'is needed (HTTPS_PROXY).',
  lost: 'Try again later: the service answered, but its answers arrived broken or cut short.',
  proxy: 'Check the proxy setting and that the proxy is up; NO_PROXY lists hosts reached directly.',
  connection: 'The connection kept failing: try again later; check the service status and the base URL.',
  status: 'Try again later; check the service status.',
};

/**
 * `answersLost`: attempts of this request whose 2xx answer was lost (each reached the service and may
 * have been charged), in `details.answers_lost` for whoever counts what was spent.
 */
export function retriesExhaustedError(
  endpoint: string,
  attempts: number,
  failure: LastFailure,
  service: string,
  answersLost = 0,
): ServiceError {
  const plural = attempts === 1 ? 'attempt' : 'attempts';
  const where = failure.kind === 'status' ? service : failure.where;
  const hintKey =
    failure.kind === 'network'
      ? failure.failureClass
      : failure.kind === 'timeout' && failure.connecting === true
        ? 'connecting'
        : failure.kind;
  return new ServiceError(
    `no answer from ${where} for ${endpoint} after ${attempts} ${plural} (last: ${describeFailure(failure)})`,
    {
      endpoint,
      attempts,
      reason: describeFailure(failure),
      retryable: true,
      hint: GIVE_UP_HINTS[hintKey],
      ...(failure.kind === 'status'
        ? { status: failure.error.status, code: failure.error.code }
        : failure.kind === 'lost'
          ? { status: failure.status, code: 'answer_lost', cause: failure.cause }
          : { code: failure.kind, cause: failure.cause }),
      details: {
        ...(failure.kind === 'status' ? failure.error.details : {}),
        // The kind of the last failure, for advice in the caller's own words: `proxy`, `connecting`, ...
        ...(hintKey !== failure.kind ? { failure_class: hintKey } : {}),
        ...(answersLost > 0 ? { answers_lost: answersLost } : {}),
      },
    },
  );
}

/** A request the service kept answering 429 (rate limited) although everyone waited as it asked. */
export function rateLimitedError(
  endpoint: string,
  attempts: number,
  service: string,
  last: RequestError,
): ServiceError {
  return new ServiceError(
    `${service} kept refusing ${endpoint} as over its rate limit (rate limit: 429 after ${attempts} attempts, ` +
      `each after the wait it asked for)`,
    {
      endpoint,
      attempts,
      reason: last.reason,
      status: last.status,
      code: last.code,
      retryable: true,
      hint: 'Another client may be using the same key; try again later, or with fewer calls at once.',
      details: { ...last.details, gave_up: 'rate_limit' },
    },
  );
}

export function retryAfterTooLongError(
  endpoint: string,
  attempts: number,
  waitMs: number,
  maxWaitMs: number,
  last: RequestError,
): ServiceError {
  return new ServiceError(
    `the service asked to wait ${formatSeconds(waitMs)} before asking ${endpoint} again ` +
      `(${last.status === 429 ? 'rate limit: ' : ''}${describeStatus(last.status ?? 0, last.code)}), ` +
      `longer than prospect waits (${formatSeconds(maxWaitMs)}); try again later`,
    {
      endpoint,
      attempts,
      reason: last.reason,
      details: { ...last.details, retry_after_ms: waitMs },
      status: last.status,
      code: last.code,
      retryable: true,
    },
  );
}

/** A 2xx whose body is not what the contract describes, once the loop stops asking again. */
export function malformedAnswerError(
  endpoint: string,
  attempts: number,
  status: number,
  problem: string,
  hint: string | undefined,
  service: string,
): MalformedResponseError {
  return new MalformedResponseError(`the service at ${service} answered ${endpoint} with ${problem}`, {
    endpoint,
    attempts,
    status,
    reason: problem,
    hint,
  });
}

/** `150 ms`, `2 s`, `2.5 s`: short waits in ms so a 150 ms timeout does not read as "0.1 s". */
function formatSeconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}

/**
 * An answer refused as it was read (over the cap on answers, or in more than one encoding layer):
 * final, as asking again would bring the same bytes. `cap_bytes` is for the setting's hint.
 */
export function answerRefusedError(
  endpoint: string,
  attempts: number,
  refused: { message: string; code: string },
  capBytes: number,
  status: number | undefined,
): ServiceError {
  return new ServiceError(`${refused.message}, for ${endpoint}; it was not read further and not asked again`, {
    endpoint,
    attempts,
    status,
    code: refused.code,
    reason: refused.message,
    details: { cap_bytes: capBytes },
  });
}
