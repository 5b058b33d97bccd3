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
import { buildUrl, createHttpClient, type HttpClient, type JsonAnswer, type PaidCallWatch } from './request-loop.js';
import { checkCompaniesPage, withDataKey } from './companies-page.js';
import { checkContactsPromises, contactRowOf } from './contacts-answer.js';
import { isRecord } from '../util/is-record.js';
import { walkCursor } from './pagination.js';
import { linkQuery, nextPageOf } from './next-page.js';
import { CONTRACT_DEFAULTS, type ContractSettings, type Verdict } from './contract.js';
import { readVerifyStatus } from './verify-status.js';
import { redactDeep } from '../util/redact.js';
import { DEFAULT_RETRY_POLICY, RETRY_DEFAULTS, type RetryPolicy } from './retry.js';
import {
  type CompaniesResponse,
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
  /**
   * One free GET, its answer as it came (any JSON): `doctor` reads the contract's open points from it.
   * A non-2xx is the RequestError every call gets. Never for /verify: only verify() pays.
   */
  probe(endpoint: '/companies' | '/contacts', params: ReadonlyArray<readonly [string, string]>): Promise<ProbeAnswer>;
  close(): Promise<void>;
}

export interface ProbeAnswer {
  status: number;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: unknown;
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
export type VerifyAnswer = VerifyResult & {
  idempotency?: 'replayed' | 'first';
  /** One of valid, invalid, risky, unknown (verify-status.ts), whatever word the service used. */
  status: Verdict;
  /** The service's own word (`accept_all`), kept for the output. */
  status_raw: string;
  /** False when the word is in no vocabulary the client knows: it was read as `unknown`. */
  status_known: boolean;
};

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
  const contract: ContractSettings = { ...CONTRACT_DEFAULTS, ...options.contract };
  const pageSize = Math.min(options.pageSize ?? CLIENT_DEFAULTS.pageSize, contract.pageSizeMax);
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
      dispatcher: options.dispatcher,
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
          baseUrl,
          cursorParam,
          cursorParamSet: options.cursorParam !== undefined,
          contract,
          pageSize: Math.min(pageOptions?.pageSize ?? pageSize, contract.pageSizeMax),
          startCursor: pageOptions?.startCursor,
          readAhead: pageOptions?.readAhead ?? false,
          signal: pageOptions?.signal,
        }),
        options.apiKey,
      ),
    contacts: async (query) => {
      const result = await fetchContacts(http, query, cursorParam, contract);
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
    verify: (email, verifyOptions) => verifyEmail(http, email, verifyOptions ?? {}, contract),
    probe: async (endpoint, params) => {
      const check = (json: unknown) => ({ ok: true as const, value: json });
      const { status, headers, value } = await http.getJson({ endpoint, params, check });
      return { status, headers, body: value };
    },
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

interface ListingSettings {
  baseUrl: URL;
  cursorParam: string;
  cursorParamSet: boolean;
  contract: ContractSettings;
  pageSize: number;
  startCursor: string | undefined;
  readAhead: boolean;
  signal: AbortSignal | undefined;
}

/** The query of one page: the filters, the page size and where the page starts (a cursor, an offset or a link). */
function companiesParams(
  query: CompanyQuery,
  options: ListingSettings,
  cursor: string | null,
): ReadonlyArray<readonly [string, string | undefined]> {
  const link = cursor === null ? undefined : linkQuery(cursor, options.baseUrl.origin);
  if (link !== undefined) return link;
  const offsets = options.contract.paging === 'offset';
  return [
    ['technology', query.technology],
    ...(query.moreTechnologies ?? []).map((name) => ['technology', name] as const),
    ['not_technology', query.notTechnology],
    ...(query.moreNotTechnologies ?? []).map((name) => ['not_technology', name] as const),
    ['employee_range', query.employeeRange],
    ['country', query.country],
    [options.contract.pageSizeParam, String(options.pageSize)],
    [offsets ? options.contract.offsetParam : options.cursorParam, cursor ?? undefined],
  ];
}

async function* listCompanies(
  http: HttpClient,
  query: CompanyQuery,
  options: ListingSettings,
): AsyncGenerator<CompanyPage, void, undefined> {
  const fetchChecked = (
    cursor: string | null,
    onBody?: (json: unknown) => void,
  ): Promise<JsonAnswer<CompaniesResponse>> =>
    http.getJson({
      endpoint: '/companies',
      params: companiesParams(query, options, cursor),
      check: checkCompaniesPage,
      onBody,
      signal: options.signal,
    });
  // Read-ahead follows a body's `next_cursor`; offsets and links are simply read one page at a time.
  const readAhead =
    options.readAhead && options.contract.paging === 'cursor' ? new PageReadAhead(fetchChecked) : undefined;
  const walk = walkCursor({
    endpoint: '/companies',
    startCursor: options.startCursor ?? null,
    forbidEmptyFirstPage: true,
    cursorParam: options.cursorParam,
    fetchPage: async (cursor) => {
      const answer = await (readAhead?.take(cursor) ?? fetchChecked(cursor, readAhead?.onBodyOfWanted));
      const { value } = answer;
      const nextCursor = nextPageOf(value, value.data, answer.headers, {
        endpoint: '/companies',
        requestUrl: buildUrl(options.baseUrl, '/companies', companiesParams(query, options, cursor)),
        origin: options.baseUrl.origin,
        cursorParam: options.cursorParam,
        cursorParamSet: options.cursorParamSet,
        paging: options.contract.paging,
        offset: cursor === null ? 0 : Number(cursor),
      });
      const first = value.data[0]?.domain;
      const last = value.data.at(-1)?.domain;
      return {
        page: value,
        itemCount: value.data.length,
        nextCursor,
        edgeKeys: first !== undefined && last !== undefined ? [first, last] : undefined,
        total: value.meta.total,
      };
    },
  });
  for await (const { page, cursor, nextCursor } of walk) {
    yield { data: page.data, meta: page.meta, nextCursor, cursor };
  }
}

const CountriesResponseSchema = z.looseObject({ data: z.array(z.string()) });

async function fetchContacts(
  http: HttpClient,
  query: ContactsQuery,
  cursorParam: string,
  contract: ContractSettings,
): Promise<ContactsResult> {
  const data: Contact[] = [];
  let meta: ContactsMeta | undefined;
  const check = (json: unknown) => checkContactsBody(json, contract);
  // The sandbox never pages contacts; a real service might (contract row 18), so follow it.
  const walk = walkCursor({
    endpoint: '/contacts',
    forbidEmptyFirstPage: false,
    cursorParam,
    fetchPage: async (cursor) => {
      const { value } = await http.getJson({
        endpoint: '/contacts',
        params: [
          ['domain', query.domains.join(',')],
          ['seniority', query.seniority?.join(',')],
          ['limit', query.limit !== undefined ? String(query.limit) : undefined],
          [cursorParam, cursor ?? undefined],
        ],
        check,
      });
      checkContactsPromises(value.rawRows, '/contacts');
      const edge = (contact: Contact | undefined) =>
        contact === undefined ? undefined : `${contact.domain} ${contact.business_email ?? contact.full_name ?? ''}`;
      const first = edge(value.data[0]);
      const last = edge(value.data.at(-1));
      return {
        page: value,
        itemCount: value.data.length,
        nextCursor: value.next_cursor,
        edgeKeys: first !== undefined && last !== undefined ? [first, last] : undefined,
      };
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
  /** The rows as renamed, before defaults: whether the service sent a field at all. */
  rawRows: Record<string, unknown>[];
  meta: ContactsMeta;
  next_cursor: string | null | undefined;
}

// Built once: zod compiles an object schema's checks on its first parse, so a schema made per answer
// cost a compile per verify call (about 0.2 ms of CPU each, a tenth of a 400-address verify).
const VerifyEnvelopeSchema = z.looseObject({ data: VerifyDataSchema, meta: VerifyMetaSchema.optional() });

/** The envelope (or a bare array, or one array under another key), its rows under our names, then the schema. */
function checkContactsBody(json: unknown, contract: ContractSettings): SchemaCheck<NormalisedContacts> {
  const envelope = withDataKey(json);
  const rows =
    isRecord(envelope) && Array.isArray(envelope.data)
      ? envelope.data.map((row) => contactRowOf(row, contract))
      : undefined;
  const checked = checkSchema(
    ContactsEnvelopeSchema,
    rows === undefined ? envelope : { ...(envelope as object), data: rows },
  );
  if (!checked.ok) return checked;
  const meta = checked.value.meta ?? {};
  const inMeta = meta.next_cursor;
  const nextCursor = checked.value.next_cursor ?? (typeof inMeta === 'string' ? inMeta : undefined);
  return {
    ok: true,
    value: {
      data: checked.value.data,
      rawRows: (rows ?? []).filter(isRecord),
      meta,
      next_cursor: nextCursor,
    },
  };
}

async function verifyEmail(
  http: HttpClient,
  email: string,
  options: VerifyCallOptions,
  contract: ContractSettings,
): Promise<VerifyAnswer> {
  const { idempotencyKey } = options;
  const post = contract.verifyMethod === 'POST';
  const answer = await http.getJson({
    endpoint: '/verify',
    path: contract.verifyPath === CONTRACT_DEFAULTS.verifyPath ? undefined : contract.verifyPath,
    params: post ? [] : [[contract.verifyParam, email]],
    jsonBody: post ? JSON.stringify({ [contract.verifyParam]: email }) : undefined,
    headers: idempotencyKey !== undefined ? { 'idempotency-key': idempotencyKey } : undefined,
    check: checkVerifyBody,
    // One unit per answered call (contract row 23): a complete answer is never asked again.
    chargedPerAnswer: true,
    paid: options.paid,
  });
  const { meta } = answer.value;
  const read = readVerifyStatus(answer.value.data.status, contract.verifyStatuses);
  const data = { ...answer.value.data, status: read.status, status_raw: read.raw, status_known: read.known };
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
