/**
 * Cursor pagination (contract row 1): follow `next_cursor` until it is absent, null or "".
 * Guards against a service that would make the client spin or write a silently empty file.
 */
import { MalformedResponseError } from './errors.js';

/** What one fetch gave: the page to hand out and the raw `next_cursor`. */
export interface FetchedPage<P> {
  page: P;
  itemCount: number;
  nextCursor: string | null | undefined;
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
  const startsAtFirstPage = cursor === null;

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
    const nextCursor = normalizeCursor(fetched.nextCursor);
    if (nextCursor !== null && seen.has(nextCursor)) {
      throw new MalformedResponseError(
        `the service returned the same cursor twice while listing ${walk.endpoint} (page ${pageNumber}); ` +
          `stopping instead of looping`,
        { endpoint: walk.endpoint, status: 200, reason: 'cursor loop' },
      );
    }
    yield { page: fetched.page, cursor, nextCursor };
    if (nextCursor === null) return;
    seen.add(nextCursor);
    cursor = nextCursor;
  }
}
