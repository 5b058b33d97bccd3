/**
 * Walking a listing page by page (contract row 1): follow the next page until there is none.
 * Guards against a service that would make the client spin, hand out the same rows again, stop short
 * of its own total, or write a silently empty file (issue 42): each names the setting that adapts it.
 */
import { MalformedResponseError } from './errors.js';

/** What one fetch gave: the page to hand out and the raw next cursor. */
export interface FetchedPage<P> {
  page: P;
  itemCount: number;
  nextCursor: string | null | undefined;
  /** The first and last row's identity (domain, or domain and address): a page repeating one seen is a loop. */
  edgeKeys?: readonly [string, string] | undefined;
  /** `meta.total` of this page, where the service counts the listing. */
  total?: number | undefined;
}

export interface WalkedPage<P> {
  page: P;
  /** The cursor that fetched this page; null for the first page of a listing. */
  cursor: string | null;
  /** The cursor of the following page; null on the last page. */
  nextCursor: string | null;
}

export interface CursorWalk<P> {
  endpoint: string;
  /** Resume a listing from a saved cursor instead of its first page. */
  startCursor?: string | null;
  /**
   * The contract forbids an empty `data` on the first page of companies (a 422 is due instead):
   * reaching it would write an empty file that reads as "nobody uses this".
   */
  forbidEmptyFirstPage: boolean;
  /** The setting that names the cursor parameter, and its value, for the message of a loop. */
  cursorParam?: string | undefined;
  fetchPage(cursor: string | null): Promise<FetchedPage<P>>;
}

/** Absent, null and "" all mean "no more pages". */
export function normalizeCursor(value: string | null | undefined): string | null {
  return value === undefined || value === null || value === '' ? null : value;
}

export async function* walkCursor<P>(walk: CursorWalk<P>): AsyncGenerator<WalkedPage<P>, void, undefined> {
  let cursor = normalizeCursor(walk.startCursor);
  // Every cursor used in this listing: one coming back means the service is looping.
  const seen = new Set<string>(cursor === null ? [] : [cursor]);
  // The first and last row of every page: a page that starts or ends on one of them repeats rows.
  const seenRows = new Set<string>();
  const startsAtFirstPage = cursor === null;
  let rows = 0;
  let total: number | undefined;

  for (let pageNumber = 1; ; pageNumber++) {
    const fetched = await walk.fetchPage(cursor);
    if (pageNumber === 1 && startsAtFirstPage && walk.forbidEmptyFirstPage && fetched.itemCount === 0) {
      throw new MalformedResponseError(
        `the service returned an empty first page for ${walk.endpoint} instead of a 422`,
        {
          endpoint: walk.endpoint,
          status: 200,
          reason: 'empty first page',
          hint: 'The contract says an unanswerable request gets a 422 with a reason; this service did not send one.',
        },
      );
    }
    if (pageNumber === 1) total = fetched.total;
    const nextCursor = normalizeCursor(fetched.nextCursor);
    if (nextCursor !== null && seen.has(nextCursor)) {
      throw loopError(walk, pageNumber, 'returned the same cursor twice');
    }
    checkNoRepeat(walk, fetched.edgeKeys, seenRows, pageNumber);
    rows += fetched.itemCount;
    if (nextCursor === null && startsAtFirstPage && total !== undefined && rows < total) {
      throw shortListingError(walk.endpoint, rows, total);
    }
    yield { page: fetched.page, cursor, nextCursor };
    if (nextCursor === null) return;
    seen.add(nextCursor);
    cursor = nextCursor;
  }
}

function checkNoRepeat<P>(
  walk: CursorWalk<P>,
  keys: readonly [string, string] | undefined,
  seenRows: Set<string>,
  pageNumber: number,
): void {
  if (keys === undefined) return;
  const [first, last] = keys;
  if (seenRows.has(first) || seenRows.has(last)) {
    throw loopError(
      walk,
      pageNumber,
      `repeated rows of an earlier page (${first === last ? first : `${first} … ${last}`})`,
    );
  }
  seenRows.add(first);
  seenRows.add(last);
}

/** A service that does not move on: most often it reads its cursor under another name than the one sent. */
function loopError<P>(walk: CursorWalk<P>, pageNumber: number, what: string): MalformedResponseError {
  const name = walk.cursorParam ?? 'cursor';
  return new MalformedResponseError(
    `the service ${what} while listing ${walk.endpoint} (page ${pageNumber}); stopping instead of looping`,
    {
      endpoint: walk.endpoint,
      status: 200,
      reason: 'cursor loop',
      code: 'contract_differs',
      details: { setting: 'cursor-param', cursor_param: name },
      hint:
        `The service may read its cursor under another name than "${name}": set cursor-param to it, or ` +
        'paging to offset for offsets.',
    },
  );
}

/** The listing's own count says there is more: a next-page signal prospect did not read. Never a short file. */
function shortListingError(endpoint: string, rows: number, total: number): MalformedResponseError {
  return new MalformedResponseError(
    `the listing of ${endpoint} ended after ${rows} rows while its meta.total says ${total}; the service ` +
      'signals its next page in a way prospect did not recognise',
    {
      endpoint,
      status: 200,
      reason: 'listing shorter than its total',
      code: 'contract_differs',
      details: { setting: 'cursor-param', rows, total },
      hint:
        'prospect reads next_cursor, meta.next_cursor, a Link rel="next" header or a next URL; for offsets set ' +
        '`paging offset` (and offset-param), for a last-id cursor set cursor-param.',
    },
  );
}
