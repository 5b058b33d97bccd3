/**
 * Variants: the sandbox playing a service that decided an open point of docs/api-contract.md otherwise,
 * as a real data API does (Stripe, GitHub, Apollo, Hunter, ZeroBounce, NeverBounce, RFC 8288, RFC 9457).
 * Each is one small transform at one place: of the request before it reaches its route (their names
 * to ours, or a refusal), or of the answer after it (our shape to theirs). The routes never know.
 * A new variant is a name in variant-names.ts and an entry in VARIANTS.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError, invalidParameter } from './errors.js';
import { errorReply } from './replies.js';
import type { Reply } from './types.js';
import type { VariantName } from './variant-names.js';

/** A request as the variants see it, before its route: what they rewrite. */
export interface VariantRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** A POST's body as sent (only a sandbox with variants reads it). */
  readonly body?: string | undefined;
}

/** What an answer's transform knows: the request as the client sent it, and where the service is. */
export interface VariantAnswerContext {
  readonly path: string;
  readonly clientQuery: URLSearchParams;
  readonly origin: string;
}

/** A plain answer: its body as JSON values, to be reshaped. */
interface PlainReply {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

interface Variant {
  /** Rewrites the request in place, or answers it at once (a refusal). */
  request?(req: VariantRequest): Reply | undefined;
  /** Reshapes the answer (a copy: the routes' objects are never touched). */
  answer?(reply: PlainReply, ctx: VariantAnswerContext): void;
}

const COMPANIES = '/api/v1/companies';
const CONTACTS = '/api/v1/contacts';
const VERIFY = '/api/v1/verify';
/** The parameters that say where a listing is, not what it lists: left out of a listing's key. */
const PAGING_PARAMETERS = new Set(['limit', 'cursor', 'offset', 'starting_after', 'page_token', 'after', 'per_page']);

type Row = Record<string, unknown>;

const isListing = (path: string) => path === COMPANIES || path === CONTACTS;
const rowsOf = (body: Record<string, unknown>): Row[] => (Array.isArray(body.data) ? (body.data as Row[]) : []);
const refusal = (error: ApiError): Reply => errorReply(error);

/** What a listing is, whatever page: its filters, sorted. */
function listingKey(query: URLSearchParams): string {
  return [...query]
    .filter(([name]) => !PAGING_PARAMETERS.has(name))
    .map(([name, value]) => `${name}=${value}`)
    .sort()
    .join('&');
}

/** Takes next_cursor out of the body, for a variant that signals the next page elsewhere. */
function takeNextCursor(body: Record<string, unknown>): string | null {
  const next = typeof body.next_cursor === 'string' ? body.next_cursor : null;
  delete body.next_cursor;
  return next;
}

function nextPageUrl(ctx: VariantAnswerContext, cursor: string): string {
  const query = new URLSearchParams(ctx.clientQuery);
  query.set('cursor', cursor);
  return `${ctx.origin}${ctx.path}?${query.toString()}`;
}

/** The cursor parameter under another name; `cursor` itself is ignored, as a service ignores what it does not know. */
function cursorParam(name: string): () => Variant {
  return () => ({
    request(req) {
      req.query.delete('cursor');
      const value = req.query.get(name);
      req.query.delete(name);
      if (value !== null) req.query.set('cursor', value);
      return undefined;
    },
  });
}

/**
 * The next page as a position the client names (an offset, the last row's id), remembered as our
 * cursor. A position at the listing's end is an empty last page, as an offset service answers an
 * offset past its rows (a client that cannot tell a short page from the last one asks for it).
 */
function positional(parameter: string, positionOf: (body: Record<string, unknown>, query: URLSearchParams) => string) {
  return (): Variant => {
    const cursors = new Map<string, string>();
    const ends = new Set<string>();
    return {
      request(req) {
        const position = req.query.get(parameter);
        req.query.delete(parameter);
        if (position === null || (parameter === 'offset' && position === '0')) return undefined;
        const at = `${listingKey(req.query)}|${position}`;
        if (ends.has(at)) return { status: 200, body: { data: [], next_cursor: null } };
        const cursor = cursors.get(at);
        if (cursor === undefined)
          return refusal(invalidParameter(parameter, `'${parameter}' is not a position of this listing.`));
        req.query.set('cursor', cursor);
        return undefined;
      },
      answer(reply, ctx) {
        if (!isListing(ctx.path) || reply.status !== 200) return;
        const next = takeNextCursor(reply.body);
        if (parameter === 'starting_after') reply.body.has_more = next !== null;
        const at = `${listingKey(ctx.clientQuery)}|${positionOf(reply.body, ctx.clientQuery)}`;
        if (next === null) ends.add(at);
        else cursors.set(at, next);
      },
    };
  };
}

/** Every row of every listing, reshaped. */
function eachRow(path: string, reshape: (row: Row) => void): () => Variant {
  return () => ({
    answer(reply, ctx) {
      if (ctx.path === path && reply.status === 200) rowsOf(reply.body).forEach(reshape);
    },
  });
}

function contactDate(format: (day: string) => unknown): () => Variant {
  return eachRow(CONTACTS, (row) => {
    const day = row.business_email_last_seen;
    if (typeof day === 'string') row.business_email_last_seen = format(day);
  });
}

/** /verify's statuses in another vocabulary: ours → theirs. */
function vocabulary(words: Readonly<Record<string, string>>): () => Variant {
  return () => ({
    answer(reply, ctx) {
      const data = reply.body.data as Row | undefined;
      if (ctx.path !== VERIFY || reply.status !== 200 || typeof data?.status !== 'string') return;
      data.status = words[data.status] ?? data.status;
    },
  });
}

/** Error bodies in another shape, from our `{error:{code, reason, ...}}`. */
function errorShape(reshape: (status: number, error: Row) => Record<string, unknown>, contentType?: string) {
  return (): Variant => ({
    answer(reply) {
      const error = reply.body.error as Row | undefined;
      if (reply.status < 400 || error === undefined) return;
      reply.body = reshape(reply.status, error);
      if (contentType) reply.headers['content-type'] = contentType;
    },
  });
}

function withoutCodeAndReason(error: Row): Row {
  const { code: _code, reason: _reason, ...extra } = error;
  return extra;
}

/** A verify endpoint that refuses: the request answered at once, with what that service says. */
function verifyRefuses(refuse: (req: VariantRequest) => Reply | undefined): () => Variant {
  return () => ({ request: (req) => (req.path === VERIFY ? refuse(req) : undefined) });
}

/** The `email` field of a JSON object body, or undefined. */
function emailInJson(body: string | undefined): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body ?? '');
    const email = (parsed as Row | null)?.email;
    return typeof email === 'string' ? email : undefined;
  } catch {
    return undefined;
  }
}

const outOfCredits = () =>
  refusal(new ApiError(402, 'insufficient_credits', 'This account has no verification credits left.'));

const VARIANTS: Readonly<Record<VariantName, () => Variant>> = {
  // RFC 8288, GitHub: the next page in a Link header.
  'paging-link-header': () => ({
    answer(reply, ctx) {
      if (!isListing(ctx.path) || reply.status !== 200) return;
      const next = takeNextCursor(reply.body);
      if (next !== null) reply.headers.link = `<${nextPageUrl(ctx, next)}>; rel="next"`;
    },
  }),
  'paging-meta-next-cursor': () => ({
    answer(reply, ctx) {
      if (!isListing(ctx.path) || reply.status !== 200) return;
      const next = takeNextCursor(reply.body);
      reply.body.meta = { ...(reply.body.meta as Row | undefined), next_cursor: next };
    },
  }),
  // Django REST framework, many others: the next page as a full URL.
  'paging-next-url': () => ({
    answer(reply, ctx) {
      if (!isListing(ctx.path) || reply.status !== 200) return;
      const next = takeNextCursor(reply.body);
      reply.body.next = next === null ? null : nextPageUrl(ctx, next);
    },
  }),
  // RFC 8288 in full: several links, rel lists, parameters in any order, a quoted comma.
  'paging-link-params': () => ({
    answer(reply, ctx) {
      if (!isListing(ctx.path) || reply.status !== 200) return;
      const next = takeNextCursor(reply.body);
      const first = `<${ctx.origin}${ctx.path}?${listingKey(ctx.clientQuery)}>; rel="first"`;
      if (next !== null)
        reply.headers.link = `${first}, <${nextPageUrl(ctx, next)}>; title="Page 2, and on"; rel="next nofollow"`;
    },
  }),
  // Django REST framework's relative form, and many hand-written APIs: the next page as a path and query.
  'paging-next-relative': () => ({
    answer(reply, ctx) {
      if (!isListing(ctx.path) || reply.status !== 200) return;
      const next = takeNextCursor(reply.body);
      reply.body.next = next === null ? null : nextPageUrl(ctx, next).slice(ctx.origin.length);
    },
  }),
  // Stripe: has_more, and the next page starts after the last row's id.
  'paging-has-more': positional('starting_after', (body) => String(rowsOf(body).at(-1)?.domain ?? '')),
  // Apollo, many SQL-backed APIs: offset and limit.
  'paging-offset': positional('offset', (body, query) =>
    String(Number(query.get('offset') ?? 0) + rowsOf(body).length),
  ),
  'cursor-param-page-token': cursorParam('page_token'),
  'cursor-param-after': cursorParam('after'),
  // A new string for the same position every time: only rows, never cursor strings, show a loop.
  'cursor-nonce': () => {
    let nonce = 0;
    return {
      request(req) {
        const cursor = req.query.get('cursor');
        if (cursor !== null) req.query.set('cursor', cursor.replace(/~\d+$/, ''));
        return undefined;
      },
      answer(reply, ctx) {
        if (isListing(ctx.path) && typeof reply.body.next_cursor === 'string')
          reply.body.next_cursor = `${reply.body.next_cursor}~${(nonce += 1)}`;
      },
    };
  },
  // GitHub: per_page, at most 100, default 30; limit means nothing to it.
  'page-size-per-page': () => ({
    request(req) {
      if (req.path !== COMPANIES) return undefined;
      const perPage = req.query.get('per_page') ?? '30';
      req.query.delete('per_page');
      req.query.delete('limit');
      if (!/^\d{1,3}$/.test(perPage) || Number(perPage) < 1 || Number(perPage) > 100)
        return refusal(invalidParameter('per_page', "'per_page' must be an integer from 1 to 100."));
      req.query.set('limit', perPage);
      return undefined;
    },
  }),
  // A service that caps a page lower than asked, and says nothing: the next page still comes.
  'page-size-capped': () => ({
    request(req) {
      if (isListing(req.path) && Number(req.query.get('limit') ?? 0) > 100) req.query.set('limit', '100');
      return undefined;
    },
  }),
  // A cursor that is a number (an id or a page number), remembered as our opaque cursor.
  'cursor-number': () => {
    const cursors: string[] = [];
    return {
      request(req) {
        const number = req.query.get('cursor');
        if (number === null) return undefined;
        const cursor = cursors[Number(number) - 1];
        if (cursor === undefined) return refusal(invalidParameter('cursor', "'cursor' is not a page of this listing."));
        req.query.set('cursor', cursor);
        return undefined;
      },
      answer(reply, ctx) {
        if (!isListing(ctx.path) || typeof reply.body.next_cursor !== 'string') return;
        reply.body.next_cursor = cursors.push(reply.body.next_cursor);
      },
    };
  },
  // has_more: true while next_cursor is null: a service whose cursor went missing (or needs the last id).
  'has-more-null-cursor': () => ({
    answer(reply, ctx) {
      if (!isListing(ctx.path) || reply.status !== 200) return;
      reply.body.has_more = typeof reply.body.next_cursor === 'string';
      reply.body.next_cursor = null;
    },
  }),
  'null-optional-fields': eachRow(COMPANIES, (row) => {
    row.description ??= null;
    // One company in seven without a name: an optional field the service does not always have.
    if (String(row.domain).length % 7 === 0) row.company_name = null;
  }),
  'numeric-strings': () => ({
    answer(reply, ctx) {
      if (ctx.path !== COMPANIES || reply.status !== 200) return;
      for (const row of rowsOf(reply.body))
        if (typeof row.crux_rank === 'number') row.crux_rank = String(row.crux_rank);
      const meta = reply.body.meta as Row | undefined;
      for (const key of ['total', 'contact_count']) if (typeof meta?.[key] === 'number') meta[key] = String(meta[key]);
    },
  }),
  'no-meta': () => ({
    answer(reply) {
      if (reply.status === 200) delete reply.body.meta;
    },
  }),
  'envelope-results': () => ({
    answer(reply, ctx) {
      if (!isListing(ctx.path) || reply.status !== 200) return;
      reply.body = { results: reply.body.data, ...reply.body, data: undefined };
      delete reply.body.data;
    },
  }),
  // {success, data: {items, total}}: the rows one level further down.
  'envelope-nested': () => ({
    answer(reply, ctx) {
      if (!isListing(ctx.path) || reply.status !== 200) return;
      const { data, ...rest } = reply.body;
      reply.body = { success: true, ...rest, data: { items: data } };
    },
  }),
  // meta.count where the contract says meta.total.
  'meta-count': () => ({
    answer(reply, ctx) {
      const meta = reply.body.meta as Row | undefined;
      if (ctx.path !== COMPANIES || reply.status !== 200 || meta === undefined) return;
      meta.count = meta.total;
      delete meta.total;
    },
  }),
  // SOAP-era and some SQL-backed APIs: every field name in capitals.
  'upper-case-fields': () => ({
    answer(reply, ctx) {
      if (!isListing(ctx.path) || reply.status !== 200) return;
      reply.body.data = rowsOf(reply.body).map((row) =>
        Object.fromEntries(Object.entries(row).map(([key, value]) => [key.toUpperCase(), value])),
      );
    },
  }),
  // Hunter, Apollo: email and a last-seen date under their own names.
  'contact-fields-email': eachRow(CONTACTS, (row) => {
    row.email = row.business_email;
    row.last_seen_at = row.business_email_last_seen;
    delete row.business_email;
    delete row.business_email_last_seen;
  }),
  'contact-date-dmy': contactDate((day) => `${day.slice(8, 10)}/${day.slice(5, 7)}/${day.slice(0, 4)}`),
  'contact-date-epoch': contactDate((day) => Date.parse(`${day}T00:00:00Z`) / 1000),
  'contact-date-time': contactDate((day) => `${day}T09:30:00Z`),
  // The same instant in the service's own zone: midnight UTC as the evening before in New York.
  'contact-date-zone': contactDate((day) => {
    const before = new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    return `${before}T19:00:00-05:00`;
  }),
  // Contacts grouped by domain: {domain, contacts: [...]}.
  'contacts-grouped': () => ({
    answer(reply, ctx) {
      if (ctx.path !== CONTACTS || reply.status !== 200) return;
      const groups = new Map<unknown, Row[]>();
      for (const { domain, ...contact } of rowsOf(reply.body))
        groups.set(domain, [...(groups.get(domain) ?? []), contact]);
      reply.body.data = [...groups].map(([domain, contacts]) => ({ domain, contacts }));
    },
  }),
  // People Data Labs, Clearbit: emails as a list of {value, type}.
  'contact-emails-array': eachRow(CONTACTS, (row) => {
    row.emails = typeof row.business_email === 'string' ? [{ value: row.business_email, type: 'work' }] : [];
    delete row.business_email;
  }),
  // "" where the contract says null.
  'contact-empty-strings': eachRow(CONTACTS, (row) => {
    for (const key of Object.keys(row)) if (row[key] === null) row[key] = '';
  }),
  'verify-deliverable': vocabulary({
    valid: 'deliverable',
    invalid: 'undeliverable',
    risky: 'accept_all',
    unknown: 'unknown',
  }),
  'verify-zerobounce': vocabulary({ valid: 'valid', invalid: 'invalid', risky: 'catch-all', unknown: 'unknown' }),
  'verify-neverbounce': vocabulary({ valid: 'valid', invalid: 'invalid', risky: 'catchall', unknown: 'unknown' }),
  // A vocabulary of its own in capitals: the words are known, the case is not the contract's.
  'verify-upper-case': vocabulary({
    valid: 'DELIVERABLE',
    invalid: 'UNDELIVERABLE',
    risky: 'ACCEPT-ALL',
    unknown: 'UNKNOWN',
  }),
  // MillionVerifier: ok and error are words no common vocabulary has; verify-statuses says what they mean.
  'verify-millionverifier': vocabulary({ valid: 'ok', invalid: 'invalid', risky: 'catch_all', unknown: 'error' }),
  // {result: {...}} where the contract says {data: {...}}.
  'verify-result-envelope': () => ({
    answer(reply, ctx) {
      if (ctx.path !== VERIFY || reply.status !== 200) return;
      const { data, ...rest } = reply.body;
      reply.body = { ...rest, result: data };
    },
  }),
  // A boolean verdict, no status word: is_valid true or false (risky and unknown both false).
  'verify-is-valid': () => ({
    answer(reply, ctx) {
      const data = reply.body.data as Row | undefined;
      if (ctx.path !== VERIFY || reply.status !== 200 || data === undefined) return;
      data.is_valid = data.status === 'valid';
      delete data.status;
    },
  }),
  // GitHub: {message}.
  'errors-message': errorShape((_status, error) => ({ message: error.reason, ...withoutCodeAndReason(error) })),
  // JSON:API and others: a list of errors.
  'errors-array': errorShape((_status, error) => ({
    errors: [{ code: error.code, message: error.reason, ...withoutCodeAndReason(error) }],
  })),
  // RFC 9457 problem details.
  'errors-problem-json': errorShape(
    (status, error) => ({
      type: `https://api.example.com/problems/${String(error.code)}`,
      title: String(error.code).replace(/_/g, ' '),
      status,
      detail: error.reason,
      ...withoutCodeAndReason(error),
    }),
    'application/problem+json',
  ),
  // Every fourth request refused as 429 with no Retry-After: the client must wait by itself, and end.
  'rate-limit-no-retry-after': () => {
    let requests = 0;
    return {
      request: (req) =>
        req.path.startsWith('/api/v1/') && (requests += 1) % 4 === 0
          ? { status: 429, body: { error: { code: 'rate_limited', reason: 'Too many requests.' } } }
          : undefined,
    };
  },
  // Hunter: /email-verifier.
  'verify-path-moved': () => ({
    request(req) {
      if (req.path === VERIFY)
        return refusal(new ApiError(404, 'not_found', 'No such endpoint. Verification is /api/v1/email-verifier.'));
      if (req.path === '/api/v1/email-verifier') req.path = VERIFY;
      return undefined;
    },
  }),
  // ZeroBounce, NeverBounce: a POST with the address in a JSON body; the query is not read.
  'verify-post-only': verifyRefuses((req) => {
    if (req.method !== 'POST')
      return refusal(new ApiError(405, 'method_not_allowed', 'Use POST for /api/v1/verify.', {}, { allow: 'POST' }));
    const email = emailInJson(req.body);
    if (email === undefined)
      return refusal(invalidParameter('email', 'A JSON body with the address as "email" is required.'));
    req.method = 'GET';
    req.query = new URLSearchParams({ email });
    return undefined;
  }),
  'verify-param-address': verifyRefuses((req) => {
    if (req.query.has('email'))
      return refusal(invalidParameter('email', "Unknown parameter 'email'. Known parameters: address."));
    const address = req.query.get('address');
    req.query.delete('address');
    if (address !== null) req.query.set('email', address);
    return undefined;
  }),
  'verify-no-credits': verifyRefuses(outOfCredits),
  // Three paid answers, then out of credits: what was paid for must be kept.
  'verify-credits-run-out': () => {
    let paid = 0;
    return {
      request: (req) => (req.path === VERIFY && paid >= 3 ? outOfCredits() : undefined),
      answer(reply, ctx) {
        if (ctx.path === VERIFY && reply.status === 200) paid += 1;
      },
    };
  },
};

/** A sandbox's variants, each with its own state; the routes' answers pass through them. */
export class VariantChain {
  private readonly chain: readonly Variant[];

  constructor(names: readonly VariantName[]) {
    // Table order: the paging signal nearest the client, the cursor's own shape nearest the route.
    const order = Object.keys(VARIANTS) as VariantName[];
    this.chain = order.filter((name) => names.includes(name)).map((name) => VARIANTS[name]());
  }

  get empty(): boolean {
    return this.chain.length === 0;
  }

  /** The request as the routes will see it, or a refusal to send instead. */
  request(req: VariantRequest): Reply | undefined {
    for (const variant of this.chain) {
      const refused = variant.request?.(req);
      if (refused) return refused;
    }
    return undefined;
  }

  /** The route's answer as this service would give it. */
  answer(reply: Reply, ctx: VariantAnswerContext): Reply {
    const plain: PlainReply = {
      status: reply.status,
      body: JSON.parse(reply.json ?? JSON.stringify(reply.body ?? {})) as Record<string, unknown>,
      headers: { ...reply.headers },
    };
    for (const variant of [...this.chain].reverse()) variant.answer?.(plain, ctx);
    return plain;
  }
}
