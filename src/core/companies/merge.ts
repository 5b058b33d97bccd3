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
import { MalformedResponseError } from '../../api/index.js';

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
 * walks, and are handed out once. `what` names the listing in an error about a walk out of order,
 * and `avoid` says how the user gets a listing without the merge.
 */
export async function* mergeWalks<Row>(
  sources: Array<MergeSource<Row>>,
  compare: (a: Row, b: Row) => number,
  what: string,
  avoid = 'Ask one value per run to avoid the merge.',
): AsyncGenerator<MergedChunk<Row>, void, undefined> {
  const states: Array<SourceState<Row>> = sources.map((source) => ({
    source,
    page: undefined,
    index: 0,
    done: source.start.done,
    previous: undefined,
  }));
  const checkOrder = states.length > 1;
  // A chunk is at most as long as the longest page: merged walks then checkpoint as often as one
  // walk does, rather than once every walk has reached the end of a page.
  let chunkRows = 1;
  const load = async (state: SourceState<Row>, skip: number): Promise<void> => {
    const next = await state.source.pages.next();
    if (next.done) {
      state.done = true;
      state.page = undefined;
      return;
    }
    state.page = next.value;
    state.index = Math.min(skip, next.value.rows.length);
    chunkRows = Math.max(chunkRows, next.value.rows.length);
  };
  try {
    // First pages: a resumed walk skips the rows of its page that were already written.
    await Promise.all(states.filter((state) => !state.done).map((state) => load(state, state.source.start.skip)));
    let rows: Row[] = [];
    for (;;) {
      // A walk at the end of its page is done, or its next page comes before any further row.
      let toLoad: Array<SourceState<Row>> | undefined;
      for (const state of states) {
        if (state.done || state.index < state.page!.rows.length) continue;
        if (state.page!.nextCursor === null) state.done = true;
        else (toLoad ??= []).push(state);
      }
      if (toLoad !== undefined) {
        if (rows.length > 0) yield { rows, positions: states.map(positionOf), last: false };
        rows = [];
        await Promise.all(toLoad.map((state) => load(state, 0)));
        continue;
      }
      let first: SourceState<Row> | undefined;
      for (const state of states)
        if (!state.done && (first === undefined || compare(headOf(state), headOf(first)) < 0)) first = state;
      if (first === undefined) {
        yield { rows, positions: states.map(positionOf), last: true };
        return;
      }
      // Only with a row still to come, so the last rows always come with `last`.
      if (rows.length >= chunkRows) {
        yield { rows, positions: states.map(positionOf), last: false };
        rows = [];
      }
      const row = headOf(first);
      rows.push(row);
      for (const state of states) {
        if (!state.done && (state === first || compare(headOf(state), row) === 0)) take(state);
      }
    }
  } finally {
    await Promise.all(states.map((state) => state.source.pages.return?.().catch(() => undefined)));
  }

  function take(state: SourceState<Row>): void {
    const row = headOf(state);
    if (checkOrder && state.previous !== undefined && compare(state.previous, row) >= 0) {
      throw new MalformedResponseError(
        `the service listed ${what} out of its documented order, so several queries cannot be merged`,
        {
          endpoint: '/companies',
          status: 200,
          reason: 'rows out of order',
          hint: `The contract orders rows by crux_rank, then domain (row 6). ${avoid}`,
        },
      );
    }
    state.previous = row;
    // The row is the chunk's now: the page lets go of it, so that pages half merged (one per walk)
    // hold only the rows still to come.
    (state.page!.rows as Array<Row | undefined>)[state.index] = undefined;
    state.index += 1;
  }
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
