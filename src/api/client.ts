/**
 * The typed client of the company and contact data service. No terminal here: no output, no
 * process.exit, no exit codes. A failed request throws a RequestError subclass (errors.ts) that
 * carries what happened over HTTP; options it cannot work with throw a ClientOptionError.
 */
import { z } from 'zod';
import type { Dispatcher } from 'undici';
import { packageVersion } from '../package.js';
import { isRecord } from '../util/is-record.js';
import { redactDeep } from '../util/redact.js';
import { checkContactsPromises, contactRowOf } from './contacts-answer.js';
import { CONTRACT_DEFAULTS, type ContractSettings, type Verdict } from './contract.js';
import { DEFAULT_CONNECT_TIMEOUT_MS } from './dispatcher.js';
import { ClientOptionError } from './errors.js';
import { DEFAULT_MAX_ANSWER_BYTES, MAX_ANSWER_BYTES_LIMIT, MAX_COMPANIES_PER_PAGE } from './limits.js';
import type { RequestPacer } from './pacer.js';
import { linkQuery, nextPageOf, walkCursor, type FetchedPage } from './paging.js';
import { isLoopbackHost } from './proxy.js';
import { PageReadAhead } from './read-ahead.js';
import {
  buildUrl,
  createHttpClient,
  type HttpClient,
  type JsonAnswer,
  type PaidCallWatch,
  type RequestEvent,
} from './request-loop.js';
import { DEFAULT_RETRY_POLICY, RETRY_DEFAULTS } from './retry.js';
import { readVerifyStatus } from './verify-status.js';
import type { WaitNotice } from './wait-watch.js';
import {
  type CompaniesResponse,
  ContactsEnvelopeSchema,
  VerifyAnswerSchema,
  checkCompaniesPage,
  checkSchema,
  withDataKey,
  type CompaniesMeta,
  type CompanyRow,
  type Contact,
  type ContactsMeta,
  type Seniority,
  type SchemaCheck,
  type VerifyResult,
} from './schemas.js';

/** Every default is the contract's or RETRY_DEFAULTS' (retry.ts); a number out of its bounds is a ClientOptionError. */
export interface ClientOptions {
  /** The service root, e.g. `https://api.example.com` (without /api/v1): https, or plain http to this machine. */
  baseUrl: string;
  apiKey: string;
  /** Name of the cursor query parameter (contract row 1a). */
  cursorParam?: string | undefined;
  /** How the service decided the open points the client cannot guess (contract.ts). */
  contract?: Partial<ContractSettings> | undefined;
  /** Companies per page (contract row 2). */
  pageSize?: number | undefined;
  /** Per attempt, covering headers and body. */
  timeoutMs?: number | undefined;
  maxRetries?: number | undefined;
  /** Longest single wait between attempts. */
  maxRetryDelayMs?: number | undefined;
  retryBaseDelayMs?: number | undefined;
  /** Connection pool size per origin. */
  connections?: number;
  /** Decoded bytes one answer may have (limits.ts); over it, a final error. */
  maxAnswerBytes?: number | undefined;
  userAgent?: string;
  /** Aborts everything in flight and every wait (SIGINT). */
  signal?: AbortSignal | undefined;
  onRequest?: ((event: RequestEvent) => void) | undefined;
  /** Jitter source in [0, 1); tests inject a fixed one. */
  random?: () => number;
  /** The proxy to go through (decideProxy in proxy.ts reads the environment as curl does); default none. */
  proxy?: URL | undefined;
  /** PEM certificates to trust instead of Node's own list (with NODE_EXTRA_CA_CERTS). */
  ca?: readonly string[] | undefined;
  /** For the TCP connection and TLS handshake; default the shorter of 10 s and timeoutMs. */
  connectTimeoutMs?: number | undefined;
  /** Told while a request has waited a while for its answer, and when none does any more. */
  onWaiting?: ((notice: WaitNotice | undefined) => void) | undefined;
  /** One pace for several clients of one service and key: its rate limit counts them all. */
  pacer?: RequestPacer | undefined;
  /**
   * The undici dispatcher to send through (a MockAgent, a stub), as openai-node takes a `fetch`:
   * never closed by the client; proxy and ca then do nothing.
   */
  dispatcher?: Dispatcher | undefined;
}

export interface CompanyQuery {
  technology: string;
  notTechnology?: string;
  /** Sent as repeated parameters (contract row 36a); the service says it applied them in `meta.technologies`. */
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
  /** Resume a listing from a saved cursor. */
  startCursor?: string;
  /**
   * Ask for the next page as soon as a body arrives, while this one is checked: at most one page
   * nobody asked for yet, so a caller that must not ask for a page it will not write leaves it off.
   */
  readAhead?: boolean;
  pageSize?: number;
  /** Withdraws the listing's requests in flight, a page asked for ahead included. */
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
export const CLIENT_DEFAULTS = { cursorParam: 'cursor', pageSize: MAX_COMPANIES_PER_PAGE, connections: 16 } as const;

/** Throws a ClientOptionError before any connection when the options are unsafe or invalid. */
export function createClient(options: ClientOptions): ProspectClient {
  const baseUrl = checkClientOptions(options);
  const contract: ContractSettings = { ...CONTRACT_DEFAULTS, ...options.contract };
  const timeoutMs = options.timeoutMs ?? RETRY_DEFAULTS.timeoutMs;
  const http = createHttpClient({
    baseUrl,
    apiKey: options.apiKey,
    timeoutMs,
    policy: {
      maxRetries: options.maxRetries ?? DEFAULT_RETRY_POLICY.maxRetries,
      baseDelayMs: options.retryBaseDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs,
      maxDelayMs: options.maxRetryDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
      random: options.random ?? DEFAULT_RETRY_POLICY.random,
    },
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
  const listing: ListingSettings = {
    baseUrl,
    contract,
    cursorParam: options.cursorParam ?? CLIENT_DEFAULTS.cursorParam,
    cursorParamSet: options.cursorParam !== undefined,
  };
  const pageSize = options.pageSize ?? CLIENT_DEFAULTS.pageSize;
  // The key gone from a meta, in whatever form the service echoed it: meta is shown and recorded.
  const withoutKey = <M>(meta: M) => redactDeep(meta, options.apiKey) as M;
  return {
    companies: (query, pageOptions = {}) =>
      listCompanies(http, listing, query, {
        ...pageOptions,
        pageSize: Math.min(pageOptions.pageSize ?? pageSize, contract.pageSizeMax),
        withoutKey,
      }),
    contacts: async (query) => {
      const result = await fetchContacts(http, listing, query);
      return { ...result, meta: withoutKey(result.meta) };
    },
    countries: async () =>
      (await http.getJson({ endpoint: '/countries', params: [], check: (json) => checkSchema(CountriesSchema, json) }))
        .value.data,
    verify: (email, verifyOptions) => verifyEmail(http, email, verifyOptions ?? {}, contract),
    probe: async (endpoint, params) => {
      const check = (json: unknown) => ({ ok: true as const, value: json });
      const { status, headers, value } = await http.getJson({ endpoint, params, check });
      return { status, headers, body: value };
    },
    close: () => http.close(),
  };
}

/** The base URL, parsed; a ClientOptionError when the options are unsafe or invalid. */
function checkClientOptions(options: ClientOptions): URL {
  const baseUrl = checkBaseUrl(options.baseUrl);
  checkApiKey(options.apiKey);
  checkNumbers(options);
  if (options.cursorParam !== undefined && options.cursorParam.trim() === '')
    throw new ClientOptionError(
      'the cursor parameter name is empty',
      'Set cursor-param to the name the service uses (default: cursor).',
    );
  return baseUrl;
}

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
    // `localhost:4010` parses as the scheme "localhost:": say what was typed, and what it lacks.
    const typed = baseUrl.trim();
    if (!typed.includes('//'))
      throw new ClientOptionError(
        `the base URL "${typed}" has no scheme`,
        `Give it with one: https://${typed} (or http://${typed} for this machine, such as the sandbox).`,
      );
    throw new ClientOptionError(`the base URL must start with https:// (got ${url.protocol}//)`);
  }
  if (url.username !== '' || url.password !== '')
    throw new ClientOptionError(
      'the base URL must not contain a user name or password',
      'The key travels in a header, never in the URL.',
      'credentials_in_base_url',
    );
  if (url.search !== '' || url.hash !== '') {
    throw new ClientOptionError(
      `the base URL must not contain a query or a fragment (${url.origin}${url.pathname}...)`,
    );
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
    throw new ClientOptionError(
      `refusing to send the API key over plain http to ${url.host}; use https://`,
      'Plain http is allowed only to this machine (127.0.0.0/8, ::1, localhost), e.g. the sandbox.',
    );
  return url;
}

/** Never echoed in a message: it could end up in a log. */
export function checkApiKey(apiKey: string): void {
  if (apiKey === '') throw new ClientOptionError('no API key is set', undefined, 'no_api_key');
  if (/[\s\u0000-\u001f\u007f]/.test(apiKey)) {
    throw new ClientOptionError(
      'the API key contains spaces or control characters',
      'Check for a stray newline when it was pasted.',
    );
  }
  // A header carries Latin-1 at most; a character past it (a smart quote pasted from a document)
  // would fail inside the HTTP library as an internal error, and no service issues such a key.
  const outside = [...apiKey].findIndex((char) => char.charCodeAt(0) > 0x7e);
  if (outside !== -1)
    throw new ClientOptionError(
      `the API key contains a character that is not plain ASCII (character ${outside + 1})`,
      'Keys are letters, digits and punctuation: check for a smart quote or a look-alike letter pasted with it.',
    );
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
  ['maxAnswerBytes', 1024, MAX_ANSWER_BYTES_LIMIT],
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

// ---------------------------------------------------------------------------------------------
// Listings

interface ListingSettings {
  baseUrl: URL;
  contract: ContractSettings;
  cursorParam: string;
  cursorParamSet: boolean;
}

type Params = ReadonlyArray<readonly [string, string | undefined]>;

/** One listing: what it asks, how its pages are checked, and what a page's rows and total are. */
interface Listing<P extends { data: readonly unknown[] }> {
  endpoint: '/companies' | '/contacts';
  /** The query of every page; the cursor (or offset) goes after it, or a link's own query replaces it. */
  query: Params;
  paging: 'cursor' | 'offset';
  check(json: unknown): SchemaCheck<P>;
  /** Checks the page as a whole, once its shape is known: thrown, never retried. */
  inspect?(page: P): void;
  edgeKey(row: P['data'][number]): string;
  total?(page: P): number | undefined;
  startCursor?: string | undefined;
  forbidEmptyFirstPage: boolean;
  readAhead?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

/** A listing's pages, each asked for by the previous one's next page (a cursor, an offset or a link). */
function walkListing<P extends { data: readonly unknown[] }>(
  http: HttpClient,
  settings: ListingSettings,
  listing: Listing<P>,
) {
  const { baseUrl, cursorParam } = settings;
  const { endpoint, paging } = listing;
  const paramsAt = (cursor: string | null): Params =>
    (cursor === null ? undefined : linkQuery(cursor, baseUrl.origin)) ?? [
      ...listing.query,
      [paging === 'offset' ? settings.contract.offsetParam : cursorParam, cursor ?? undefined],
    ];
  const fetchChecked = (cursor: string | null, onBody?: (json: unknown) => void): Promise<JsonAnswer<P>> =>
    http.getJson({ endpoint, params: paramsAt(cursor), check: listing.check, onBody, signal: listing.signal });
  // Read-ahead follows a body's `next_cursor`; offsets and links are read one page at a time.
  const readAhead = listing.readAhead && paging === 'cursor' ? new PageReadAhead(fetchChecked) : undefined;
  const fetchPage = async (cursor: string | null): Promise<FetchedPage<P>> => {
    const { value, headers } = await (readAhead?.take(cursor) ?? fetchChecked(cursor, readAhead?.onBodyOfWanted));
    listing.inspect?.(value);
    const nextCursor = nextPageOf(value as unknown as Record<string, unknown>, value.data, headers, {
      endpoint,
      requestUrl: buildUrl(baseUrl, endpoint, paramsAt(cursor)),
      origin: baseUrl.origin,
      cursorParamSet: settings.cursorParamSet,
      paging,
      offset: cursor === null ? 0 : Number(cursor),
    });
    const edges = value.data.length === 0 ? [] : [value.data[0], value.data.at(-1)];
    const edgeKeys = edges.map((row) => listing.edgeKey(row as P['data'][number]));
    return { page: value, itemCount: value.data.length, nextCursor, edgeKeys, total: listing.total?.(value) };
  };
  return walkCursor({
    endpoint,
    startCursor: listing.startCursor,
    forbidEmptyFirstPage: listing.forbidEmptyFirstPage,
    cursorParam,
    fetchPage,
  });
}

async function* listCompanies(
  http: HttpClient,
  settings: ListingSettings,
  query: CompanyQuery,
  options: CompanyListingOptions & { pageSize: number; withoutKey: <M>(meta: M) => M },
): AsyncGenerator<CompanyPage, void, undefined> {
  const walk = walkListing<CompaniesResponse>(http, settings, {
    endpoint: '/companies',
    query: [
      ['technology', query.technology],
      ...(query.moreTechnologies ?? []).map((name) => ['technology', name] as const),
      ['not_technology', query.notTechnology],
      ...(query.moreNotTechnologies ?? []).map((name) => ['not_technology', name] as const),
      ['employee_range', query.employeeRange],
      ['country', query.country],
      [settings.contract.pageSizeParam, String(options.pageSize)],
    ],
    paging: settings.contract.paging,
    check: checkCompaniesPage,
    edgeKey: (row) => row.domain,
    total: (page) => page.meta.total,
    startCursor: options.startCursor,
    forbidEmptyFirstPage: true,
    readAhead: options.readAhead,
    signal: options.signal,
  });
  for await (const { page, cursor, nextCursor } of walk)
    yield { data: page.data, meta: options.withoutKey(page.meta), nextCursor, cursor };
}

const CountriesSchema = z.looseObject({ data: z.array(z.string()) });

interface ContactsPage {
  data: Contact[];
  /** The rows as renamed, before defaults: whether the service sent a field at all. */
  rawRows: Record<string, unknown>[];
  meta: ContactsMeta;
}

async function fetchContacts(
  http: HttpClient,
  settings: ListingSettings,
  query: ContactsQuery,
): Promise<ContactsResult> {
  const data: Contact[] = [];
  let meta: ContactsMeta | undefined;
  // The sandbox never pages contacts; a real service might (contract row 18), so follow it.
  const walk = walkListing<ContactsPage>(http, settings, {
    endpoint: '/contacts',
    query: [
      ['domain', query.domains.join(',')],
      ['seniority', query.seniority?.join(',')],
      ['limit', query.limit !== undefined ? String(query.limit) : undefined],
    ],
    paging: 'cursor',
    check: (json) => checkContactsBody(json, settings.contract),
    inspect: (page) => checkContactsPromises(page.rawRows, '/contacts'),
    edgeKey: (contact) => `${contact.domain} ${contact.business_email ?? contact.full_name ?? ''}`,
    forbidEmptyFirstPage: false,
  });
  for await (const { page } of walk) {
    data.push(...page.data);
    meta ??= page.meta;
  }
  return { data, meta: meta ?? {} };
}

/** The envelope (or a bare array, or one array under another key), its rows under our names, then the schema. */
function checkContactsBody(json: unknown, contract: ContractSettings): SchemaCheck<ContactsPage> {
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
  return {
    ok: true,
    value: { ...checked.value, meta: checked.value.meta ?? {}, rawRows: (rows ?? []).filter(isRecord) },
  };
}

// ---------------------------------------------------------------------------------------------
// The paid check

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
    check: (json) => checkSchema(VerifyAnswerSchema, json),
    // One unit per answered call (contract row 23): a complete answer is never asked again.
    chargedPerAnswer: true,
    paid: options.paid,
  });
  const { data, meta } = answer.value;
  const read = readVerifyStatus(data.status, contract.verifyStatuses);
  const result: VerifyAnswer = { ...data, status: read.status, status_raw: read.raw, status_known: read.known };
  const units = headerText(answer.headers['x-units-used']);
  const unitsUsed = meta?.units_used ?? (/^\d+$/.test(units ?? '') ? Number(units) : undefined);
  if (unitsUsed !== undefined) result.meta = { ...meta, units_used: unitsUsed };
  else if (meta !== undefined) result.meta = meta;
  // `Idempotent-Replayed: true|false` (contract row 27); anything else says nothing.
  const replayed = idempotencyKey === undefined ? undefined : headerText(answer.headers['idempotent-replayed']);
  if (replayed?.toLowerCase() === 'true') result.idempotency = 'replayed';
  if (replayed?.toLowerCase() === 'false') result.idempotency = 'first';
  return result;
}

function headerText(value: string | string[] | undefined): string | undefined {
  return (Array.isArray(value) ? value[0] : value)?.trim();
}
