/**
 * Walking a listing (contract rows 1a, 1b; issue 42): where an answer says its next page is, and the
 * guards against a service that would make the client spin, repeat rows, stop short of its own total
 * or write a silently empty file. Each failure names the setting that adapts the client.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { MalformedResponseError } from './errors.js';
import { MAX_CURSOR_LENGTH } from './limits.js';
import { isRecord } from '../util/is-record.js';

/** What one fetch gave: the page to hand out and the raw next cursor. */
export interface FetchedPage<P> {
  page: P;
  itemCount: number;
  nextCursor: string | null | undefined;
  /** The first and last row's identity (domain, or domain and address): a page repeating one seen is a loop. */
  edgeKeys?: readonly string[] | undefined;
  /** `meta.total` of this page, where the service counts the listing. */
  total?: number | undefined;
}

export interface WalkedPage<P> {
  page: P;
  /** The cursor that fetched this page (null for the first page) and the next one's (null on the last). */
  cursor: string | null;
  nextCursor: string | null;
}

export interface CursorWalk<P> {
  endpoint: string;
  startCursor?: string | null;
  /** Companies: the contract says 422, never an empty first page, which would read as "nobody uses this". */
  forbidEmptyFirstPage: boolean;
  /** The cursor parameter's name, for the message of a loop. */
  cursorParam?: string | undefined;
  fetchPage(cursor: string | null): Promise<FetchedPage<P>>;
}

/** A cursor in a body: text, or a number some services send; absent, null and "" mean the last page. */
export function textCursor(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return typeof value === 'string' && value !== '' ? value : null;
}

/** The service decided an open point otherwise: never retried (the same answer would come again). */
function contractDiffers(
  endpoint: string,
  message: string,
  details: Record<string, unknown> & { setting: string },
  hint?: string,
  reason = message,
): MalformedResponseError {
  return new MalformedResponseError(message, {
    endpoint,
    status: 200,
    reason,
    code: 'contract_differs',
    details,
    hint,
  });
}

export async function* walkCursor<P>(walk: CursorWalk<P>): AsyncGenerator<WalkedPage<P>, void, undefined> {
  let cursor = textCursor(walk.startCursor);
  const startsAtFirstPage = cursor === null;
  // Every cursor used, and the first and last row of every page: one coming back means a loop.
  const seen = new Set<string>(cursor === null ? [] : [cursor]);
  const seenRows = new Set<string>();
  let rows = 0;
  let total: number | undefined;
  for (let pageNumber = 1; ; pageNumber++) {
    const fetched = await walk.fetchPage(cursor);
    if (pageNumber === 1) {
      if (startsAtFirstPage && walk.forbidEmptyFirstPage && fetched.itemCount === 0)
        throw new MalformedResponseError(
          `the service returned an empty first page for ${walk.endpoint} instead of a 422`,
          {
            endpoint: walk.endpoint,
            status: 200,
            reason: 'empty first page',
            hint: 'The contract says an unanswerable request gets a 422 with a reason; this service did not send one.',
          },
        );
      total = fetched.total;
    }
    const nextCursor = textCursor(fetched.nextCursor);
    if (nextCursor !== null && seen.has(nextCursor))
      throw loopError(walk, pageNumber, 'returned the same cursor twice');
    const keys = fetched.edgeKeys ?? [];
    if (keys.some((key) => seenRows.has(key))) {
      const [first, last] = [keys[0], keys.at(-1)];
      throw loopError(
        walk,
        pageNumber,
        `repeated rows of an earlier page (${first === last ? first : `${first} … ${last}`})`,
      );
    }
    for (const key of keys) seenRows.add(key);
    rows += fetched.itemCount;
    if (nextCursor === null && startsAtFirstPage && total !== undefined && rows < total)
      throw contractDiffers(
        walk.endpoint,
        `the listing of ${walk.endpoint} ended after ${rows} rows while its meta.total says ${total}; the service ` +
          'signals its next page in a way prospect did not recognise',
        { setting: 'cursor-param', rows, total },
        'prospect reads next_cursor, meta.next_cursor, a Link rel="next" header or a next URL; for offsets set ' +
          '`paging offset` (and offset-param), for a last-id cursor set cursor-param.',
        'listing shorter than its total',
      );
    yield { page: fetched.page, cursor, nextCursor };
    if (nextCursor === null) return;
    seen.add(nextCursor);
    cursor = nextCursor;
  }
}

/** A service that does not move on: most often it reads its cursor under another name than the one sent. */
function loopError<P>(walk: CursorWalk<P>, pageNumber: number, what: string): MalformedResponseError {
  const name = walk.cursorParam ?? 'cursor';
  return contractDiffers(
    walk.endpoint,
    `the service ${what} while listing ${walk.endpoint} (page ${pageNumber}); stopping instead of looping`,
    { setting: 'cursor-param', cursor_param: name },
    `The service may read its cursor under another name than "${name}": set cursor-param to it, or ` +
      'paging to offset for offsets.',
    'cursor loop',
  );
}

export interface NextPageContext {
  endpoint: string;
  /** The URL this page was asked for: a relative `next` resolves against it. */
  requestUrl: string;
  /** The one origin requests (and the key) may go to. */
  origin: string;
  /** Whether cursor-param was set: `has_more` with the last id needs it. */
  cursorParamSet: boolean;
  paging: 'cursor' | 'offset';
  /** With offset paging: the offset this page was asked at. */
  offset: number;
}

/**
 * The next page's cursor, or null on the last page: `next_cursor` or `meta.next_cursor`, an RFC 8288
 * `Link: <…>; rel="next"` header or a `next` URL (kept as that URL, of the same origin only: the key never
 * goes to another host), `has_more` with the last row's id, or an offset.
 */
export function nextPageOf(
  body: Record<string, unknown>,
  rows: readonly unknown[],
  headers: IncomingHttpHeaders,
  context: NextPageContext,
): string | null {
  const next = nextPageIn(body, rows, headers, context);
  // However it came, a next page is bounded: one that grows each page would grow each request line (issue 41).
  if (next !== null && next.length > MAX_CURSOR_LENGTH)
    throw new MalformedResponseError(
      `the service answered ${context.endpoint} with a next page of ${next.length} characters, ` +
        `over the ${MAX_CURSOR_LENGTH} prospect sends`,
      { endpoint: context.endpoint, status: 200, reason: 'a next page too long to send' },
    );
  return next;
}

function nextPageIn(
  body: Record<string, unknown>,
  rows: readonly unknown[],
  headers: IncomingHttpHeaders,
  context: NextPageContext,
): string | null {
  if (context.paging === 'offset') return rows.length === 0 ? null : String(context.offset + rows.length);
  const meta = isRecord(body.meta) ? body.meta : {};
  const cursor = textCursor(body.next_cursor) ?? textCursor(meta.next_cursor);
  if (cursor !== null) return cursor;
  const link = nextLink(headers.link) ?? textCursor(body.next) ?? textCursor(meta.next);
  if (link !== null) return sameOriginUrl(link, context);
  if (body.has_more !== true && meta.has_more !== true) return null;
  if (!context.cursorParamSet)
    throw contractDiffers(
      context.endpoint,
      `the service answered ${context.endpoint} with "has_more": true but no next cursor; which parameter ` +
        `takes the last row's id cannot be guessed`,
      { setting: 'cursor-param' },
      'Set cursor-param to the parameter the service reads the last id from (e.g. starting_after).',
      'has_more without a cursor',
    );
  const last = rows.at(-1);
  const id = isRecord(last) ? (last.id ?? last.domain) : undefined;
  if (typeof id !== 'string' && typeof id !== 'number')
    throw answeredWith(context.endpoint, '"has_more": true after a page without rows or ids', 'cursor-param');
  return String(id);
}

/**
 * The target of `rel="next"` in a Link header (RFC 8288), or null: any of several links, a rel list
 * (`rel="next nofollow"`), its parameters in any order, quoted values with commas. The doctor reads it too.
 */
export function nextLink(header: string | string[] | undefined): string | null {
  const text = Array.isArray(header) ? header.join(', ') : header;
  if (text === undefined) return null;
  for (const value of linkValues(text)) {
    const target = /^\s*<([^>]*)>/.exec(value);
    if (target === null) continue;
    const params = value.slice(target[0].length).matchAll(/;\s*([^\s=;,]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;,]*))/g);
    for (const [, name, quoted, bare] of params) {
      const relations = (quoted ?? bare ?? '').toLowerCase().split(/\s+/);
      if (name!.toLowerCase() === 'rel' && relations.includes('next')) return target[1]!.trim();
    }
  }
  return null;
}

/** A Link header's link-values: split at the commas outside a `<URI>` and a quoted string. */
function linkValues(text: string): string[] {
  const values: string[] = [];
  let start = 0;
  let within: '<' | '"' | undefined;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (within === '"' && char === '\\') i += 1;
    else if ((within === '"' && char === '"') || (within === '<' && char === '>')) within = undefined;
    else if (within === undefined && (char === '<' || char === '"')) within = char;
    else if (within === undefined && char === ',') {
      values.push(text.slice(start, i));
      start = i + 1;
    }
  }
  values.push(text.slice(start));
  return values;
}

/** An absolute URL on the service's own origin and the listing's path; another host never gets the key. */
function sameOriginUrl(link: string, context: NextPageContext): string {
  if (!URL.canParse(link, context.requestUrl))
    throw answeredWith(context.endpoint, `a next-page link that is not a URL ("${link.slice(0, 80)}")`, 'next page');
  const url = new URL(link, context.requestUrl);
  if (url.origin !== context.origin)
    throw answeredWith(
      context.endpoint,
      `a next page on another host (${url.origin}); prospect sends the API key only to ${context.origin}`,
      'next page',
    );
  if (url.pathname !== new URL(context.requestUrl).pathname)
    throw answeredWith(context.endpoint, `a next page on another path (${url.pathname})`, 'next page');
  url.hash = '';
  return url.href;
}

/** "the service answered /contacts with contacts without ...": the reason is the `what`. */
export function answeredWith(endpoint: string, what: string, setting: string, hint?: string): MalformedResponseError {
  return contractDiffers(endpoint, `the service answered ${endpoint} with ${what}`, { setting }, hint, what);
}

/** A cursor that is a URL of the listing (from a link): its query is the request. */
export function linkQuery(cursor: string, origin: string): Array<[string, string]> | undefined {
  if (!cursor.startsWith(`${origin}/`)) return undefined;
  return [...new URL(cursor).searchParams.entries()];
}
