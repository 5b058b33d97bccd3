/** Reading a listing's next page while the caller still checks the one it has. */
import { isRecord } from '../util/is-record.js';

/**
 * One page asked for ahead of the caller: when the body of a page the caller waits for arrives, its
 * raw `next_cursor` is read and that page is asked for at once, before the body is checked. A page
 * asked for ahead asks for its own next only once the caller has taken it, so at most one request
 * runs ahead of what the caller asked for.
 */
export class PageReadAhead<T> {
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
