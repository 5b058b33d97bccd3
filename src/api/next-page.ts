/**
 * Where a listing's answer says its next page is (contract row 1b, issue 42): `next_cursor`,
 * `meta.next_cursor`, an RFC 8288 `Link: <…>; rel="next"` header, a `next` URL, `has_more` with the last
 * row's id, or an offset. A next page given as a URL is kept as that URL (same origin only: the key
 * never goes to another host), so a checkpoint resumes it like any cursor.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { MalformedResponseError } from './errors.js';
import { MAX_CURSOR_LENGTH } from './limits.js';
import { isRecord } from '../util/is-record.js';
import { normalizeCursor } from './pagination.js';

export interface NextPageContext {
  endpoint: string;
  /** The URL this page was asked for: a relative `next` resolves against it. */
  requestUrl: string;
  /** The origin requests may go to (checkBaseUrl's). */
  origin: string;
  cursorParam: string;
  /** Whether cursor-param was set: `has_more` with the last id needs it. */
  cursorParamSet: boolean;
  paging: 'cursor' | 'offset';
  /** With offset paging: the offset this page was asked at. */
  offset: number;
}

/** The next page's cursor (a URL for a link), or null on the last page. */
export function nextPageOf(
  body: Record<string, unknown>,
  rows: readonly unknown[],
  headers: IncomingHttpHeaders,
  context: NextPageContext,
): string | null {
  const next = nextPageIn(body, rows, headers, context);
  // However it came (a body field, a Link header, a URL), a next page is bounded: one that grows each
  // page would make each request line longer than the last (issue 41).
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
  if (body.has_more === true || meta.has_more === true) return lastIdCursor(rows, context);
  return null;
}

/** A cursor in a body: a string, or a number some services send; the doctor reads it the same way. */
export function textCursor(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return typeof value === 'string' ? normalizeCursor(value) : null;
}

/**
 * The target of `rel="next"` in a Link header (RFC 8288), or null: any of several links, a rel list
 * (`rel="next nofollow"`), its parameters in any order, quoted values with commas. The doctor reads
 * the header with it too, so the two never disagree.
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

/** An absolute URL on the service's own origin; another host is refused, never sent the key. */
function sameOriginUrl(link: string, context: NextPageContext): string {
  let url: URL;
  try {
    url = new URL(link, context.requestUrl);
  } catch {
    throw brokenPromise(context, `a next-page link that is not a URL ("${link.slice(0, 80)}")`, 'next page');
  }
  if (url.origin !== context.origin) {
    throw brokenPromise(
      context,
      `a next page on another host (${url.origin}); prospect sends the API key only to ${context.origin}`,
      'next page',
    );
  }
  if (url.pathname !== new URL(context.requestUrl).pathname) {
    throw brokenPromise(context, `a next page on another path (${url.pathname})`, 'next page');
  }
  url.hash = '';
  return url.href;
}

/** `has_more` and no cursor: the last row's id goes under cursor-param, once someone named it. */
function lastIdCursor(rows: readonly unknown[], context: NextPageContext): string {
  if (!context.cursorParamSet) {
    throw new MalformedResponseError(
      `the service answered ${context.endpoint} with "has_more": true but no next cursor; which parameter ` +
        `takes the last row's id cannot be guessed`,
      {
        endpoint: context.endpoint,
        status: 200,
        reason: 'has_more without a cursor',
        code: 'contract_differs',
        details: { setting: 'cursor-param' },
        hint: 'Set cursor-param to the parameter the service reads the last id from (e.g. starting_after).',
      },
    );
  }
  const last = rows.at(-1);
  const id = isRecord(last) ? (last.id ?? last.domain) : undefined;
  if (typeof id !== 'string' && typeof id !== 'number') {
    throw brokenPromise(context, '"has_more": true after a page without rows or ids', 'cursor-param');
  }
  return String(id);
}

function brokenPromise(context: NextPageContext, what: string, setting: string): MalformedResponseError {
  return new MalformedResponseError(`the service answered ${context.endpoint} with ${what}`, {
    endpoint: context.endpoint,
    status: 200,
    reason: what,
    code: 'contract_differs',
    details: { setting },
  });
}

/** A cursor that is a URL of the listing (from a link): its query is the request. */
export function linkQuery(cursor: string, origin: string): Array<[string, string]> | undefined {
  if (!cursor.startsWith(`${origin}/`)) return undefined;
  return [...new URL(cursor).searchParams.entries()];
}
