/** What the service answered, or failed to answer, as facts; outside text is redacted: services echo keys. */
import { STATUS_CODES } from 'node:http';
import type { RequestError, RequestErrorInit } from './errors.js';
import { describeFailure, failure, type BuiltKind, type LastFailure, type MessageFacts } from './failures.js';
import { isRecord } from '../util/is-record.js';
import { displaySafe } from '../util/display-safe.js';
import { shorten } from '../util/text.js';
import { redact, redactDeep } from '../util/redact.js';
import { isRetryableStatus } from './retry.js';

// request-loop.ts imports these from here; their words are failures.ts's.
export { describeFailure, type LastFailure } from './failures.js';

interface ParsedErrorBody {
  code?: string | undefined;
  reason?: string | undefined;
  details: Record<string, unknown>;
  /** Where the code and reason were read, when not the contract's `{"error":{…}}` (what doctor reports). */
  shape?: 'error text' | 'errors array' | 'top-level fields' | 'no JSON';
}

/** A non-empty string as one short line of plain text: reasons go into one-line messages. */
function nonEmptyString(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  return shorten(displaySafe(value.replace(/\s+/g, ' ')).trim(), 300);
}

/** The contract's `{"error":{…}}`, and tolerantly (row 8) `{"error":"…"}`, `message`, `errors`, RFC 9457. */
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
  parsed.reason ??= nonEmptyString(error);
  delete parsed.details.error;
  return parsed;
}

/** Code, reason and the rest of one error object, whichever of the common field names it uses. */
function fieldsOf(error: Record<string, unknown>): ParsedErrorBody {
  const { code, reason, message, detail, title, type, status: _status, ...details } = error;
  return {
    code: nonEmptyString(code) ?? codeOfProblemType(type),
    reason: nonEmptyString(reason) ?? nonEmptyString(message) ?? nonEmptyString(detail) ?? nonEmptyString(title),
    details,
  };
}

/** RFC 9457 `type`: `https://…/problems/unknown-technology` → `unknown_technology`; `about:blank` says nothing. */
function codeOfProblemType(type: unknown): string | undefined {
  if (typeof type !== 'string' || type === 'about:blank') return undefined;
  const slug = type.split(/[/#]/).filter(Boolean).at(-1) ?? '';
  const code = slug.toLowerCase().replace(/[-\s]+/g, '_');
  return /^[a-z][a-z0-9_]{0,63}$/.test(code) ? code : undefined;
}

interface ResponseFacts {
  endpoint: string;
  status: number;
  bodyText: string;
  /** The `Location` header of a 3xx, resolved against the request URL. */
  location?: string | undefined;
  /** The API key, only so it can be redacted from what the service said. */
  secret?: string;
}

/** The one mapping from a non-2xx answer to an error; the retry loop also calls it to describe the last failure. */
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
  const words = { said: body.reason, serviceCode: body.code };
  if (status === 422) return unanswerableError(body, init, words);
  if (status >= 300 && status <= 399) {
    const { location } = facts;
    const target = location !== undefined && URL.canParse(location) ? new URL(location).origin : undefined;
    return failure('redirect', init, { where: target !== undefined ? redact(target, secret) : undefined });
  }
  const page = status === 400 && !/^\s*[{[]/.test(facts.bodyText) && CLIENT_CERTIFICATE_PAGE.exec(facts.bodyText);
  if (page) {
    const code = 'client_certificate_required';
    return failure('client_certificate', { ...init, retryable: false, code }, { what: page[0] });
  }
  return failure(statusKind(status, body.code), init, words);
}

function statusKind(status: number, code: string | undefined): BuiltKind {
  if (status === 401) return 'auth';
  if (status === 403) return code === 'plan_required' ? 'plan' : 'forbidden';
  if (status === 400) return 'bad_request';
  if (status === 404) return 'not_found';
  return isRetryableStatus(status) ? 'unavailable' : 'unexpected_status';
}

/** The page a TLS terminator (nginx) answers when the client sent no certificate it required. */
const CLIENT_CERTIFICATE_PAGE = /No required SSL certificate was sent|The SSL certificate error/i;

/** The 422 codes of the contract (row 7): all but `no_match` refuse a value of the request. */
const CONTRACT_422_CODES: ReadonlySet<string> = new Set([
  'no_match',
  'unknown_technology',
  'unknown_country',
  'unknown_employee_range',
  'contradictory_filters',
]);
const REFUSES_A_VALUE =
  /\b(unknown|not found|no such|not recogni[sz]ed|did you mean|invalid|not a valid|unsupported|not supported)\b/;
const MATCHED_NOTHING = /\b(no match|no matches|no results?|nothing matched|no companies|matched nobody|no records)\b/;

/** A 422 worded otherwise as the contract's code (row 7c), input first: a misspelling never reads as no match. */
function contractCodeOf422(body: ParsedErrorBody): string | undefined {
  if (body.code !== undefined && CONTRACT_422_CODES.has(body.code)) return body.code;
  const text = `${body.code ?? ''} ${body.reason ?? ''}`.toLowerCase().replace(/_/g, ' ');
  const { suggestions, valid_values } = body.details;
  const listsValues = [suggestions, valid_values].some((value) => Array.isArray(value) && value.length > 0);
  if (listsValues || REFUSES_A_VALUE.test(text)) {
    if (/countr/.test(text)) return 'unknown_country';
    if (/employee|range|size/.test(text)) return 'unknown_employee_range';
    return 'unknown_technology';
  }
  return MATCHED_NOTHING.test(text) ? 'no_match' : undefined;
}

/** A 422 that cannot tell "matched nobody" from a misspelling is malformed, never what a cron job reads as nobody. */
function unanswerableError(body: ParsedErrorBody, init: RequestErrorInit, words: MessageFacts): RequestError {
  const code = contractCodeOf422(body);
  if (body.reason === undefined || code === undefined) return failure('unreadable_refusal', init, words);
  const serviceCode = code !== body.code && body.code !== undefined ? { service_code: body.code } : {};
  const kind = code === 'no_match' ? 'unanswerable' : 'refused_value';
  return failure(kind, { ...init, code, details: { ...init.details, ...serviceCode } }, words);
}

function giveUpKind(last: LastFailure): BuiltKind {
  if (last.kind === 'network')
    return ({ DNS: 'dns', refused: 'refused', proxy: 'proxy_unreachable', connection: 'connection' } as const)[
      last.failureClass
    ];
  if (last.kind === 'timeout') return last.connecting === true ? 'connecting' : 'timeout';
  return last.kind === 'lost' ? 'answer_lost' : 'status';
}

/** `answersLost`: attempts whose 2xx was lost (each may have been charged), in `details.answers_lost`. */
export function retriesExhaustedError(
  endpoint: string,
  attempts: number,
  last: LastFailure,
  service: string,
  answersLost = 0,
): RequestError {
  const what = describeFailure(last);
  const facts =
    last.kind === 'status'
      ? { status: last.error.status, code: last.error.code, details: last.error.details }
      : last.kind === 'lost'
        ? { status: last.status, code: 'answer_lost', cause: last.cause }
        : { code: last.kind, cause: last.cause };
  const details = { ...facts.details, ...(answersLost > 0 ? { answers_lost: answersLost } : {}) };
  const init = { endpoint, attempts, reason: what, retryable: true, ...facts, details };
  return failure(giveUpKind(last), init, { where: last.kind === 'status' ? service : last.where, what });
}

/** A request the service kept answering 429 although everyone waited as it asked. */
export function rateLimitedError(endpoint: string, attempts: number, service: string, last: RequestError) {
  const { reason, status, code, details } = last;
  const init = { endpoint, attempts, reason, status, code, details, retryable: true };
  return failure('rate_limited', init, { where: service });
}

export function retryAfterTooLongError(
  endpoint: string,
  attempts: number,
  waitMs: number,
  maxWaitMs: number,
  last: RequestError,
): RequestError {
  const { reason, status, code } = last;
  const details = { ...last.details, retry_after_ms: waitMs };
  const init = { endpoint, attempts, reason, status, code, details, retryable: true };
  return failure('wait_too_long', init, { waitMs, maxWaitMs, serviceCode: code });
}

/** A 2xx whose body is not what the contract describes, once the loop stops asking again. */
export function malformedAnswerError(
  endpoint: string,
  attempts: number,
  status: number,
  problem: string,
  hint: string | undefined,
  service: string,
): RequestError {
  return failure('malformed', { endpoint, attempts, status, reason: problem, hint }, { where: service, what: problem });
}

/** Refused as it was read (over the cap, or in layers of encoding): final, as asking again brings the same bytes. */
export function answerRefusedError(
  endpoint: string,
  attempts: number,
  refused: { message: string; code: string },
  capBytes: number,
  status: number | undefined,
): RequestError {
  const { code, message } = refused;
  const init = { endpoint, attempts, status, code, reason: message, details: { cap_bytes: capBytes } };
  return failure('answer_refused', init, { what: message });
}
