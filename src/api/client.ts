/**
 * The typed client of the company and contact data service. No terminal here: no output, no
 * process.exit, no exit codes. A failed request throws a RequestError subclass (errors.ts) that
 * carries what happened over HTTP; options it cannot work with throw a ClientOptionError.
 */
import { z } from 'zod';
import { packageVersion } from '../package.js';
import { isRecord } from '../util/is-record.js';
import { ClientOptionError } from './errors.js';
import { MAX_COMPANIES_PER_PAGE } from './limits.js';
import { DEFAULT_CONNECT_TIMEOUT_MS } from './dispatcher.js';
import { isLoopbackHost } from './proxy.js';
import type { RequestPacer } from './pacer.js';
import {
  createHttpClient,
  type HttpClient,
  type JsonAnswer,
  type PaidCallWatch,
  type RequestEvent,
} from './request-loop.js';
import type { WaitNotice } from './wait-watch.js';
import { checkCompaniesPage } from './companies-page.js';
import { walkCursor } from './pagination.js';
import { DEFAULT_RETRY_POLICY, RETRY_DEFAULTS, type RetryPolicy } from './retry.js';
import {
  type CompaniesResponse,
  ContactSchema,
  ContactsEnvelopeSchema,
  VerifyDataSchema,
  VerifyMetaSchema,
  checkSchema,
  type CompaniesMeta,
  type CompanyRow,
  type Contact,
  type ContactsMeta,
  type Seniority,
  type SchemaCheck,
  type VerifyMeta,
  type VerifyResult,
} from './schemas.js';

export interface ClientOptions {
  /** The service root, e.g. `http://127.0.0.1:4010` (without /api/v1); a trailing slash is fine. */
  baseUrl: string;
  apiKey: string;
  /** Name of the cursor query parameter; default `cursor` (contract row 1). */
  cursorParam?: string | undefined;
  /** Companies `limit`; default 1000 (contract row 2). */
  pageSize?: number | undefined;
  /** Per attempt, covering headers and body; default RETRY_DEFAULTS.timeoutMs (src/api/retry.ts). */
  timeoutMs?: number | undefined;
  /** Default RETRY_DEFAULTS.maxRetries. */
  maxRetries?: number | undefined;
  /** Longest single wait between attempts; default RETRY_DEFAULTS.maxDelayMs. */
  maxRetryDelayMs?: number | undefined;
  /** Backoff base; default RETRY_DEFAULTS.baseDelayMs. */
  retryBaseDelayMs?: number | undefined;
  /** Connection pool size per origin; default 16. */
  connections?: number;
  userAgent?: string;
  /** Aborts everything in flight and every wait (SIGINT). */
  signal?: AbortSignal | undefined;
  onRequest?: ((event: RequestEvent) => void) | undefined;
  /** Jitter source in [0, 1); default Math.random. Tests inject a fixed one. */
  random?: () => number;
  /** The proxy to go through (decideProxy in proxy.ts reads it as curl does); default: none. */
  proxy?: URL | undefined;
  /** PEM certificates to trust instead of Node's own list; default: Node's (with NODE_EXTRA_CA_CERTS). */
  ca?: readonly string[] | undefined;
  /** For the TCP connection and TLS handshake; default the shorter of 10 s and timeoutMs. */
  connectTimeoutMs?: number | undefined;
  /** Told while a request has waited a while for its answer (WAIT_NOTICE_AFTER_MS), and when none does any more. */
  onWaiting?: ((notice: WaitNotice | undefined) => void) | undefined;
  /**
   * One pace for several clients of the same service and key (a run's paid calls and its listing):
   * the service's rate limit counts them all. Default: a pacer of this client's own.
   */
  pacer?: RequestPacer | undefined;
}

export interface CompanyQuery {
  technology: string;
  notTechnology?: string;
  /**
   * More technologies of each kind, sent as repeated parameters (contract row 4). A service that
   * does not take them answers 400 or ignores them; it says it applied them in `meta.technologies`.
   */
  moreTechnologies?: string[];
  moreNotTechnologies?: string[];
  employeeRange?: string;
  country?: string;
}

export interface CompanyPage {
  data: CompanyRow[];
  meta: CompaniesMeta;
  nextCursor: string | null;
  /** The cursor that fetched this page (null for the first page of a listing). */
  cursor: string | null;
}

export interface CompanyListingOptions {
  /** Resume a listing from a saved cursor instead of its first page. */
  startCursor?: string;
  /**
   * Ask for the page after the one being waited for as soon as its body has arrived, before the
   * page's rows are checked: the check then runs while the next page is on the wire. At most one
   * page is asked for that nobody has asked for yet, so a caller that stops early (--max) and must
   * not make a call for a page it will not write leaves this off.
   */
  readAhead?: boolean;
  /** Rows per page for this listing; default the client's pageSize. */
  pageSize?: number;
  /**
   * Withdraws the listing's requests in flight, a page asked for ahead included: a walk stopped at
   * --max, or split into parts, ends all of them at once instead of waiting for answers it drops.
   */
  signal?: AbortSignal;
}

export interface ContactsQuery {
  domains: string[];
  seniority?: Seniority[];
  limit?: number;
}

export interface ContactsResult {
  data: Contact[];
  meta: ContactsMeta;
}

export interface ProspectClient {
  companies(query: CompanyQuery, options?: CompanyListingOptions): AsyncIterable<CompanyPage>;
  contacts(query: ContactsQuery): Promise<ContactsResult>;
  /** The values the `country` parameter accepts (contract row 36). */
  countries(): Promise<string[]>;
  /**
   * One paid check. `idempotencyKey` (contract row 27) lets a retry, or a resumed run, ask again for
   * an answer it lost without paying twice, where the service honours the header. `paid` hears of
   * each answer lost after sending and decides whether a retry after it goes out (the budget's call).
   */
  verify(email: string, options?: VerifyCallOptions): Promise<VerifyAnswer>;
  close(): Promise<void>;
}

export interface VerifyCallOptions {
  idempotencyKey?: string | undefined;
  paid?: PaidCallWatch | undefined;
}

/**
 * A verification, and whether the service confirmed the Idempotency-Key (contract row 27): the
 * `Idempotent-Replayed` header, `true` when the answer is the first one again (no new unit), `false`
 * when it is a new one. Undefined: the service said nothing, so a key may not have been honoured.
 */
export type VerifyAnswer = VerifyResult & { idempotency?: 'replayed' | 'first' };

/** The defaults of what is not about retrying (those are RETRY_DEFAULTS in retry.ts). */
export const CLIENT_DEFAULTS = {
  cursorParam: 'cursor',
  pageSize: MAX_COMPANIES_PER_PAGE,
  connections: 16,
} as const;

/** Throws a ClientOptionError before any connection when the options are unsafe or invalid. */
export function createClient(options: ClientOptions): ProspectClient {
  const baseUrl = checkBaseUrl(options.baseUrl);
  checkApiKey(options.apiKey);
  checkNumbers(options);
  if (options.cursorParam !== undefined && options.cursorParam.trim() === '') {
    throw new ClientOptionError(
      'the cursor parameter name is empty',
      'Set cursor-param to the name the service uses (default: cursor).',
    );
  }
  const cursorParam = options.cursorParam ?? CLIENT_DEFAULTS.cursorParam;
  const pageSize = options.pageSize ?? CLIENT_DEFAULTS.pageSize;
  const policy: RetryPolicy = {
    maxRetries: options.maxRetries ?? DEFAULT_RETRY_POLICY.maxRetries,
    baseDelayMs: options.retryBaseDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs,
    maxDelayMs: options.maxRetryDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
    random: options.random ?? DEFAULT_RETRY_POLICY.random,
  };
  const timeoutMs = options.timeoutMs ?? RETRY_DEFAULTS.timeoutMs;
  const http = createHttpClient({
    baseUrl,
    apiKey: options.apiKey,
    timeoutMs,
    policy,
    connections: options.connections ?? CLIENT_DEFAULTS.connections,
    network: {
      proxy: options.proxy,
      ca: options.ca,
      connectTimeoutMs: options.connectTimeoutMs ?? Math.min(DEFAULT_CONNECT_TIMEOUT_MS, timeoutMs),
    },
    userAgent: options.userAgent ?? `prospect-cli/${packageVersion()}`,
    signal: options.signal,
    onRequest: options.onRequest,
    onWaiting: options.onWaiting,
    pacer: options.pacer,
  });

  return {
    companies: (query, pageOptions) =>
      listCompanies(http, query, {
        cursorParam,
        pageSize: pageOptions?.pageSize ?? pageSize,
        startCursor: pageOptions?.startCursor,
        readAhead: pageOptions?.readAhead ?? false,
        signal: pageOptions?.signal,
      }),
    contacts: (query) => fetchContacts(http, query, cursorParam),
    countries: async () =>
      (
        await http.getJson({
          endpoint: '/countries',
          params: [],
          check: (json) => checkSchema(CountriesResponseSchema, json),
        })
      ).value.data,
    verify: (email, verifyOptions) => verifyEmail(http, email, verifyOptions ?? {}),
    close: () => http.close(),
  };
}

// ---------------------------------------------------------------------------------------------
// Endpoints

async function* listCompanies(
  http: HttpClient,
  query: CompanyQuery,
  options: {
    cursorParam: string;
    pageSize: number;
    startCursor: string | undefined;
    readAhead: boolean;
    signal: AbortSignal | undefined;
  },
): AsyncGenerator<CompanyPage, void, undefined> {
  const fetchChecked = (
    cursor: string | null,
    onBody?: (json: unknown) => void,
  ): Promise<JsonAnswer<CompaniesResponse>> =>
    http.getJson({
      endpoint: '/companies',
      params: [
        ['technology', query.technology],
        ...(query.moreTechnologies ?? []).map((name) => ['technology', name] as const),
        ['not_technology', query.notTechnology],
        ...(query.moreNotTechnologies ?? []).map((name) => ['not_technology', name] as const),
        ['employee_range', query.employeeRange],
        ['country', query.country],
        ['limit', String(options.pageSize)],
        [options.cursorParam, cursor ?? undefined],
      ],
      check: checkCompaniesPage,
      onBody,
      signal: options.signal,
    });
  const readAhead = options.readAhead ? new PageReadAhead(fetchChecked) : undefined;
  const walk = walkCursor({
    endpoint: '/companies',
    startCursor: options.startCursor ?? null,
    forbidEmptyFirstPage: true,
    fetchPage: async (cursor) => {
      const { value } = await (readAhead?.take(cursor) ?? fetchChecked(cursor, readAhead?.onBodyOfWanted));
      return { page: value, itemCount: value.data.length, nextCursor: value.next_cursor };
    },
  });
  for await (const { page, cursor, nextCursor } of walk) {
    yield { data: page.data, meta: page.meta, nextCursor, cursor };
  }
}

/**
 * One page asked for ahead of the caller: when the body of a page the caller waits for arrives, its
 * raw `next_cursor` is read and that page is asked for at once, before the body is checked. A page
 * asked for ahead asks for its own next only once the caller has taken it, so at most one request
 * runs ahead of what the caller asked for.
 */
class PageReadAhead<T> {
  private ahead: { cursor: string; answer: Promise<T>; taken: boolean; next: string | null | undefined } | undefined;

  constructor(private readonly fetchPage: (cursor: string, onBody: (json: unknown) => void) => Promise<T>) {}

  readonly onBodyOfWanted = (json: unknown): void => this.askFor(nextCursorIn(json));

  /** The page asked for ahead, if it is the one wanted now; the caller then waits for it. */
  take(cursor: string | null): Promise<T> | undefined {
    const ahead = this.ahead;
    if (ahead === undefined || ahead.cursor !== cursor || ahead.taken) return undefined;
    ahead.taken = true;
    if (ahead.next !== undefined) this.askFor(ahead.next);
    return ahead.answer;
  }

  private askFor(cursor: string | null): void {
    if (cursor === null || this.ahead?.cursor === cursor) return;
    const entry: NonNullable<typeof this.ahead> = {
      cursor,
      answer: Promise.resolve(undefined as T),
      taken: false,
      next: undefined,
    };
    entry.answer = this.fetchPage(cursor, (json) => {
      entry.next = nextCursorIn(json);
      if (entry.taken) this.askFor(entry.next);
    });
    // Its failure is thrown to whoever takes it; a page never taken must not count as unhandled.
    entry.answer.catch(() => {});
    this.ahead = entry;
  }
}

/** The raw `next_cursor` of an unchecked body: a cursor, or null for "no more pages" or "unreadable". */
function nextCursorIn(json: unknown): string | null {
  const next = isRecord(json) ? json.next_cursor : undefined;
  return typeof next === 'string' && next !== '' ? next : null;
}

const CountriesResponseSchema = z.looseObject({ data: z.array(z.string()) });

async function fetchContacts(http: HttpClient, query: ContactsQuery, cursorParam: string): Promise<ContactsResult> {
  const data: Contact[] = [];
  let meta: ContactsMeta | undefined;
  // The sandbox never pages contacts; a real service might (contract row 18), so follow it.
  const walk = walkCursor({
    endpoint: '/contacts',
    forbidEmptyFirstPage: false,
    fetchPage: async (cursor) => {
      const { value } = await http.getJson({
        endpoint: '/contacts',
        params: [
          ['domain', query.domains.join(',')],
          ['seniority', query.seniority?.join(',')],
          ['limit', query.limit !== undefined ? String(query.limit) : undefined],
          [cursorParam, cursor ?? undefined],
        ],
        check: checkContactsBody,
      });
      return { page: value, itemCount: value.data.length, nextCursor: value.next_cursor };
    },
  });
  for await (const { page } of walk) {
    data.push(...page.data);
    meta ??= page.meta;
  }
  return { data, meta: meta ?? {} };
}

interface NormalisedContacts {
  data: Contact[];
  meta: ContactsMeta;
  next_cursor: string | null | undefined;
}

/** Picks the schema by shape so a failure names the real problem, not "no union member matched". */
function checkContactsBody(json: unknown): SchemaCheck<NormalisedContacts> {
  if (Array.isArray(json)) {
    const checked = checkSchema(z.array(ContactSchema), json);
    return checked.ok ? { ok: true, value: { data: checked.value, meta: {}, next_cursor: null } } : checked;
  }
  const checked = checkSchema(ContactsEnvelopeSchema, json);
  if (!checked.ok) return checked;
  return {
    ok: true,
    value: { data: checked.value.data, meta: checked.value.meta ?? {}, next_cursor: checked.value.next_cursor },
  };
}

async function verifyEmail(http: HttpClient, email: string, options: VerifyCallOptions): Promise<VerifyAnswer> {
  const { idempotencyKey } = options;
  const answer = await http.getJson({
    endpoint: '/verify',
    params: [['email', email]],
    headers: idempotencyKey !== undefined ? { 'idempotency-key': idempotencyKey } : undefined,
    check: checkVerifyBody,
    // One unit per answered call (contract row 23): a complete answer is never asked again.
    chargedPerAnswer: true,
    paid: options.paid,
  });
  const { data, meta } = answer.value;
  const unitsUsed = meta?.units_used ?? unitsFromHeader(answer.headers['x-units-used']);
  const replayed = idempotencyKey === undefined ? undefined : replayedFromHeader(answer.headers['idempotent-replayed']);
  const result: VerifyAnswer = meta === undefined && unitsUsed === undefined ? { ...data } : { ...data, meta };
  if (unitsUsed !== undefined) result.meta = { ...meta, units_used: unitsUsed };
  if (replayed !== undefined) result.idempotency = replayed ? 'replayed' : 'first';
  return result;
}

/** `Idempotent-Replayed: true|false` (contract row 27); anything else says nothing. */
function replayedFromHeader(value: string | string[] | undefined): boolean | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim().toLowerCase();
  return text === 'true' ? true : text === 'false' ? false : undefined;
}

type VerifyData = z.infer<typeof VerifyDataSchema>;

function checkVerifyBody(json: unknown): SchemaCheck<{ data: VerifyData; meta: VerifyMeta | undefined }> {
  const wrapped = json !== null && typeof json === 'object' && !Array.isArray(json) && 'data' in json;
  if (!wrapped) {
    // Tolerated: a bare `{email, status, ...}` without the contract's envelope.
    const checked = checkSchema(VerifyDataSchema, json);
    return checked.ok ? { ok: true, value: { data: checked.value, meta: undefined } } : checked;
  }
  const checked = checkSchema(z.looseObject({ data: VerifyDataSchema, meta: VerifyMetaSchema.optional() }), json);
  return checked.ok ? { ok: true, value: { data: checked.value.data, meta: checked.value.meta } } : checked;
}

function unitsFromHeader(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || !/^\d+$/.test(text.trim())) return undefined;
  return Number(text.trim());
}

// ---------------------------------------------------------------------------------------------
// Option checks

export { isLoopbackHost };

/**
 * The key goes in a header of every request, so where requests go is a security decision:
 * https anywhere, plain http only to this machine.
 */
export function checkBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    throw new ClientOptionError(
      `the base URL "${baseUrl}" is not a valid URL`,
      'Give the service root, e.g. https://api.example.com',
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ClientOptionError(`the base URL must start with https:// (got ${url.protocol}//)`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new ClientOptionError(
      'the base URL must not contain a user name or password',
      'Put the API key in PROSPECT_API_KEY.',
    );
  }
  if (url.search !== '' || url.hash !== '') {
    throw new ClientOptionError(
      `the base URL must not contain a query or a fragment (${url.origin}${url.pathname}...)`,
    );
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new ClientOptionError(
      `refusing to send the API key over plain http to ${url.host}; use https://`,
      'Plain http is allowed only to this machine (127.0.0.0/8, ::1, localhost), e.g. the sandbox.',
    );
  }
  return url;
}

function checkApiKey(apiKey: string): void {
  if (apiKey === '') {
    throw new ClientOptionError(
      'no API key is set',
      'Set PROSPECT_API_KEY (or `prospect config set api-key`), or try --sandbox.',
    );
  }
  // Never echo the key: a message about it could end up in a log.
  if (/[\s\u0000-\u001f\u007f]/.test(apiKey)) {
    throw new ClientOptionError(
      'the API key contains spaces or control characters',
      'Check for a stray newline when it was pasted.',
    );
  }
}

/** Node timers overflow (and fire at once) above 2^31-1 ms, so longer waits are refused. */
const MAX_TIMER_MS = 2_147_483_647;

const NUMBER_LIMITS: ReadonlyArray<[keyof ClientOptions, number, number]> = [
  ['pageSize', 1, MAX_COMPANIES_PER_PAGE],
  ['timeoutMs', 1, MAX_TIMER_MS],
  ['connectTimeoutMs', 1, MAX_TIMER_MS],
  ['maxRetries', 0, 100],
  ['maxRetryDelayMs', 0, MAX_TIMER_MS],
  ['retryBaseDelayMs', 0, MAX_TIMER_MS],
  ['connections', 1, 1024],
];

function checkNumbers(options: ClientOptions): void {
  for (const [name, min, max] of NUMBER_LIMITS) {
    const value = options[name];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw new ClientOptionError(`${name} must be an integer from ${min} to ${max} (got ${String(value)})`);
    }
  }
}
