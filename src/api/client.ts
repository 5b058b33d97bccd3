/**
 * The typed client of the company and contact data service. No terminal here: no output, no
 * process.exit, no exit codes. A failed request throws a RequestError subclass (errors.ts) that
 * carries what happened over HTTP; options it cannot work with throw a ClientOptionError.
 */
import { z } from 'zod';
import { packageVersion } from '../package.js';
import { checkClientOptions, type ClientOptions } from './client-options.js';
import { DEFAULT_MAX_ANSWER_BYTES, MAX_COMPANIES_PER_PAGE } from './limits.js';
import { DEFAULT_CONNECT_TIMEOUT_MS } from './dispatcher.js';
import { PageReadAhead } from './read-ahead.js';
import { createHttpClient, type HttpClient, type JsonAnswer, type PaidCallWatch } from './request-loop.js';
import { checkCompaniesPage } from './companies-page.js';
import { walkCursor } from './pagination.js';
import { redactDeep } from '../util/redact.js';
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

export { checkBaseUrl, type ClientOptions } from './client-options.js';
export { isLoopbackHost } from './proxy.js';

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

interface CompanyListingOptions {
  /** Resume a listing from a saved cursor instead of its first page. */
  startCursor?: string;
  /**
   * Ask for the page after the one being waited for as soon as its body has arrived, before the
   * page's rows are checked: the check then runs while the next page is on the wire. At most one
   * page is asked for that nobody has asked for yet, so a caller that stops early (at a row cap) and must
   * not make a call for a page it will not write leaves this off.
   */
  readAhead?: boolean;
  /** Rows per page for this listing; default the client's pageSize. */
  pageSize?: number;
  /**
   * Withdraws the listing's requests in flight, a page asked for ahead included: a walk stopped at
   * a row cap, or split into parts, ends all of them at once instead of waiting for answers it drops.
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
  const baseUrl = checkClientOptions(options);
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
    maxAnswerBytes: options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES,
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
      withoutKeyInMeta(
        listCompanies(http, query, {
          cursorParam,
          pageSize: pageOptions?.pageSize ?? pageSize,
          startCursor: pageOptions?.startCursor,
          readAhead: pageOptions?.readAhead ?? false,
          signal: pageOptions?.signal,
        }),
        options.apiKey,
      ),
    contacts: async (query) => {
      const result = await fetchContacts(http, query, cursorParam);
      return { ...result, meta: redactDeep(result.meta, options.apiKey) as ContactsMeta };
    },
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

/**
 * A listing's pages with the key gone from their meta, in whatever form the service echoed it: meta.scope
 * and the rest are shown, and recorded in --summary and FILE.meta.json. The rows and the cursor stay as sent.
 */
async function* withoutKeyInMeta(pages: AsyncGenerator<CompanyPage>, apiKey: string): AsyncGenerator<CompanyPage> {
  for await (const page of pages) yield { ...page, meta: redactDeep(page.meta, apiKey) as CompaniesMeta };
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

// Built once: zod compiles an object schema's checks on its first parse, so a schema made per answer
// cost a compile per verify call (about 0.2 ms of CPU each, a tenth of a 400-address verify).
const BareContactsSchema = z.array(ContactSchema);
const VerifyEnvelopeSchema = z.looseObject({ data: VerifyDataSchema, meta: VerifyMetaSchema.optional() });

/** Picks the schema by shape so a failure names the real problem, not "no union member matched". */
function checkContactsBody(json: unknown): SchemaCheck<NormalisedContacts> {
  if (Array.isArray(json)) {
    const checked = checkSchema(BareContactsSchema, json);
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
  const checked = checkSchema(VerifyEnvelopeSchema, json);
  return checked.ok ? { ok: true, value: { data: checked.value.data, meta: checked.value.meta } } : checked;
}

function unitsFromHeader(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || !/^\d+$/.test(text.trim())) return undefined;
  return Number(text.trim());
}
