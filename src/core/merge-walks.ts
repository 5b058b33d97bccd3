/**
 * Several cursor walks, each sorted by the same order, merged into one walk in that order without
 * duplicates: a k-way merge that holds one page per walk. It serves any-of filters (one service
 * query per value) and partitioned exports alike.
 *
 * It hands out chunks: the rows up to the moment a walk needs its next page, with every walk's
 * position after them. A chunk is written and checkpointed as a page is; a run that resumes from a
 * position gives the same rows as one that never stopped, because each walk's pages are stable
 * (contract row 6). With one walk a chunk is a page, and the order is not relied on.
 */
import { MalformedResponseError } from '../api/index.js';

/** Where one walk stands: the page to fetch (null: the first) and how many of its rows are done. */
export interface WalkPosition {
  cursor: string | null;
  skip: number;
  done: boolean;
}

export interface WalkPage<Row> {
  rows: Row[];
  /** The cursor that fetched this page; null for a first page. */
  cursor: string | null;
  nextCursor: string | null;
}

export interface MergeSource<Row> {
  /** The walk's pages, from its position's cursor on (nothing when the position is done). */
  pages: AsyncIterator<WalkPage<Row>>;
  start: WalkPosition;
}

export interface MergedChunk<Row> {
  rows: Row[];
  /** Every walk's position once these rows are written: what a checkpoint keeps. */
  positions: WalkPosition[];
  /** Nothing comes after this chunk. */
  last: boolean;
}

export const START: WalkPosition = { cursor: null, skip: 0, done: false };

interface SourceState<Row> {
  source: MergeSource<Row>;
  page: WalkPage<Row> | undefined;
  index: number;
  done: boolean;
  previous: Row | undefined;
}

/**
 * `compare` orders rows (negative: a first); rows that compare equal are one row, seen in several
 * walks, and are handed out once. `what` names the listing in an error about a walk out of order.
 */
export async function* mergeWalks<Row>(sources: Array<MergeSource<Row>>, compare: (a: Row, b: Row) => number, what: string): AsyncGenerator<MergedChunk<Row>, void, undefined> {
  const states: Array<SourceState<Row>> = sources.map((source) => ({ source, page: undefined, index: 0, done: source.start.done, previous: undefined }));
  const checkOrder = states.length > 1;
  try {
    // First pages: a resumed walk skips the rows of its page that were already written.
    await Promise.all(states.filter((state) => !state.done).map((state) => load(state, state.source.start.skip)));
    let rows: Row[] = [];
    for (;;) {
      const waiting = states.filter((state) => !state.done && state.index >= state.page!.rows.length);
      for (const state of waiting) if (state.page!.nextCursor === null) state.done = true;
      const toLoad = waiting.filter((state) => !state.done);
      const live = states.filter((state) => !state.done);
      if (toLoad.length > 0) {
        if (rows.length > 0) yield { rows, positions: states.map(positionOf), last: false };
        rows = [];
        await Promise.all(toLoad.map((state) => load(state, 0)));
        continue;
      }
      if (live.length === 0) {
        yield { rows, positions: states.map(positionOf), last: true };
        return;
      }
      let first = live[0]!;
      for (const state of live) if (compare(headOf(state), headOf(first)) < 0) first = state;
      const row = headOf(first);
      rows.push(row);
      for (const state of live) {
        if (state === first || compare(headOf(state), row) === 0) take(state);
      }
    }
  } finally {
    await Promise.all(states.map((state) => state.source.pages.return?.().catch(() => undefined)));
  }

  function take(state: SourceState<Row>): void {
    const row = headOf(state);
    if (checkOrder && state.previous !== undefined && compare(state.previous, row) >= 0) {
      throw new MalformedResponseError(`the service listed ${what} out of its documented order, so several queries cannot be merged`, {
        endpoint: '/companies',
        status: 200,
        reason: 'rows out of order',
        hint: 'The contract orders rows by crux_rank, then domain (row 6). Ask one value per run to avoid the merge.',
      });
    }
    state.previous = row;
    state.index += 1;
  }
}

async function load<Row>(state: SourceState<Row>, skip: number): Promise<void> {
  const next = await state.source.pages.next();
  if (next.done) {
    state.done = true;
    state.page = undefined;
    return;
  }
  state.page = next.value;
  state.index = Math.min(skip, next.value.rows.length);
}

function headOf<Row>(state: SourceState<Row>): Row {
  return state.page!.rows[state.index]!;
}

function positionOf<Row>(state: SourceState<Row>): WalkPosition {
  if (state.done) return { cursor: null, skip: 0, done: true };
  const page = state.page!;
  if (state.index >= page.rows.length) return { cursor: page.nextCursor, skip: 0, done: false };
  return { cursor: page.cursor, skip: state.index, done: false };
}
