/**
 * The companies of a filter set, walked as its service queries (companyQueries) and merged into the
 * service's order (contract row 6: crux_rank, then domain), each company once. A query the service
 * answers with `no_match` is an empty part of the set; when every query does, that answer stands.
 * A long listing of one query is split into parts walked at once where that is proven to list the
 * same companies (companies/split.ts).
 */
import {
  CLIENT_DEFAULTS,
  UnanswerableError,
  type CompanyQuery,
  type CompanyRow,
  type ProspectClient,
} from '../../api/index.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import { localTechnologies, type CompanyFilters } from './filters.js';
import type { QueryAnswer } from './query-answer.js';
import {
  chooseSplitters,
  describeSplit,
  partQueries,
  proveSplit,
  refusedPart,
  splitLevels,
  worthSplitting,
  type Partition,
  type SplitOptions,
} from './split.js';
import { mergeWalks, START, type MergedChunk, type MergeSource, type WalkPage, type WalkPosition } from './merge.js';

export interface CompanyWalkOptions {
  /** Where each query (or each part of `partition`) stands (a checkpoint's positions); from the start without. */
  positions?: WalkPosition[] | undefined;
  /** Let the client ask for each query's next page ahead (never with --max: no call for a page not written). */
  readAhead?: boolean;
  /** Rows per page; the client's page size without. */
  pageSize?: number | undefined;
  /** Split a long listing of one query into parts walked at once, when that can pay and is proven complete. */
  split?: SplitOptions | undefined;
  /** The parts a checkpoint recorded: they are walked from `positions`, as the run that split them did. */
  partition?: Partition | undefined;
}

export type { QueryAnswer };

export interface CompanyWalk {
  chunks: AsyncGenerator<MergedChunk<CompanyRow>, void, undefined>;
  /**
   * One per query, filled in as each query's first page (or its no_match) arrives. A split query's
   * answer is the set's own (its first page's meta), never a part's.
   */
  answers: Array<QueryAnswer | undefined>;
  /** The parts the chunks' positions are of, once the first chunk is out; undefined when each query is one cursor. */
  readonly partition: Partition | undefined;
}

/** What a user does to walk a split listing with one cursor instead. */
const UNSPLIT = 'Give --concurrency 1 to walk it with one cursor.';

/**
 * With --max and every filter applied by the service, a page of --max rows per query holds every row
 * that will be written: `--max 5` asks for 5 rows, not a page of 1,000 to throw 995 away.
 */
export function pageSizeForMax(
  max: number | undefined,
  filteredHere: boolean,
  pageSize: number = CLIENT_DEFAULTS.pageSize,
): number | undefined {
  return max !== undefined && !filteredHere ? Math.min(max, pageSize) : undefined;
}

/** The contract's order of company rows: crux_rank ascending, then domain by code points. */
function compareCompanies(a: CompanyRow, b: CompanyRow): number {
  if (a.crux_rank !== b.crux_rank) return a.crux_rank - b.crux_rank;
  return a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0;
}

function isNoMatch(error: unknown): error is UnanswerableError {
  return error instanceof UnanswerableError && error.code === 'no_match';
}

export function walkCompanies(
  client: Pick<ProspectClient, 'companies'>,
  queries: CompanyQuery[],
  options: CompanyWalkOptions = {},
): CompanyWalk {
  const walked = options.partition?.queries ?? queries;
  if (options.positions !== undefined && options.positions.length !== walked.length) {
    throw new Error(`a walk of ${walked.length} queries cannot resume from ${options.positions.length} positions`);
  }
  if (options.partition !== undefined && queries.length !== 1)
    throw new Error(`a partition splits one query, not ${queries.length}`);
  const answers: Array<QueryAnswer | undefined> = queries.map(() => undefined);
  const state: { partition: Partition | undefined } = { partition: options.partition };
  let chunks: AsyncGenerator<MergedChunk<CompanyRow>, void, undefined>;
  if (options.partition !== undefined) {
    chunks = mergeWalks(
      resumedParts(client, options.partition, options, answers),
      compareCompanies,
      'companies',
      UNSPLIT,
    );
  } else if (
    options.split !== undefined &&
    queries.length === 1 &&
    options.positions === undefined &&
    splitLevels(options.split.concurrency) > 0
  ) {
    chunks = splitWalk(client, queries[0]!, options.split, options, answers, state);
  } else {
    const sources = queries.map((query, i) => {
      const start = options.positions?.[i] ?? START;
      return {
        start,
        pages: start.done
          ? emptyPages()
          : pagesOf(
              client,
              query,
              start,
              { readAhead: options.readAhead ?? false, pageSize: options.pageSize },
              (answer) => (answers[i] ??= answer),
            ),
      };
    });
    chunks = mergeWalks(sources, compareCompanies, 'companies');
  }
  return {
    chunks: everyQueryOrNone(chunks, answers),
    answers,
    get partition() {
      return state.partition;
    },
  };
}

/**
 * One query's listing, split if that can pay and is proven complete, else one cursor. The set's
 * first page comes first either way: it counts the set, is the sample the split is chosen on, and,
 * when the listing is not split, is the first page of the one cursor (nothing is asked twice). A
 * split costs the parts' first pages, asked at once; when the proof fails they are dropped, and
 * that is all a failed split costs.
 */
async function* splitWalk(
  client: Pick<ProspectClient, 'companies'>,
  query: CompanyQuery,
  split: SplitOptions,
  options: CompanyWalkOptions,
  answers: Array<QueryAnswer | undefined>,
  state: { partition: Partition | undefined },
): AsyncGenerator<MergedChunk<CompanyRow>, void, undefined> {
  // Planned in a function of its own, so that no page it fetched stays referenced by this frame
  // for the whole walk (the merge lets go of each page as it goes).
  const planned = await planSplit(client, query, split, options, answers);
  if (planned === undefined) {
    // No company matches: the one answer the walk has is the service's no_match.
    yield { rows: [], positions: [{ cursor: null, skip: 0, done: true }], last: true };
    return;
  }
  state.partition = planned.partition;
  yield* mergeWalks(
    planned.sources,
    compareCompanies,
    'companies',
    planned.partition === undefined ? undefined : UNSPLIT,
  );
}

async function planSplit(
  client: Pick<ProspectClient, 'companies'>,
  query: CompanyQuery,
  split: SplitOptions,
  options: CompanyWalkOptions,
  answers: Array<QueryAnswer | undefined>,
): Promise<{ sources: Array<MergeSource<CompanyRow>>; partition?: Partition } | undefined> {
  const pageSize = options.pageSize;
  const sample = await firstPageOf(client, query, pageSize, (answer) => (answers[0] ??= answer));
  const whole = answers[0];
  if (sample === undefined || whole?.kind !== 'meta') return undefined;
  const oneCursor = (why?: string) => {
    if (why !== undefined) split.explain?.(`the listing is walked with one cursor: ${why}.`, true);
    return {
      sources: [
        {
          start: START,
          pages: pagesAfter(
            client,
            query,
            sample,
            { ahead: options.readAhead ?? false, pageSize },
            (answer) => (answers[0] ??= answer),
          ),
        },
      ],
    };
  };
  const total = whole.meta.total;
  if (sample.nextCursor === null || total === undefined || !worthSplitting(total, sample.rows.length, split.max))
    return oneCursor();
  const splitters = chooseSplitters(sample.rows, splitLevels(split.concurrency), split.avoid);
  if (splitters.length === 0) return oneCursor('no technology of its first page splits it');
  const parts = partQueries(query, splitters);
  const partAnswers: Array<QueryAnswer | undefined> = parts.map(() => undefined);
  let firsts: Array<WalkPage<CompanyRow> | undefined>;
  try {
    firsts = await Promise.all(
      parts.map((part, i) => firstPageOf(client, part, pageSize, (answer) => (partAnswers[i] ??= answer))),
    );
  } catch (error) {
    if (!refusedPart(error)) throw error;
    return oneCursor(`the service refused a part of it (${error.message})`);
  }
  const proof = proveSplit(whole.meta, parts, partAnswers);
  if (!proof.complete) return oneCursor(proof.why);
  split.explain?.(
    `Walking the listing of ${countOf(total, 'company', 'companies')} as ${formatCount(parts.length)} ` +
      `parts at once (${describeSplit(splitters)}).`,
    false,
  );
  return {
    partition: {
      queries: parts,
      total,
      ...(whole.meta.contact_count === undefined ? {} : { contact_count: whole.meta.contact_count }),
    },
    // Every part reads ahead: the merge takes rows from all of them, so each must keep its pages coming.
    sources: parts.map((part, i): MergeSource<CompanyRow> => {
      const first = firsts[i];
      return {
        start: START,
        pages:
          first === undefined
            ? emptyPages()
            : pagesAfter(client, part, first, { ahead: true, pageSize }, (answer) => (partAnswers[i] ??= answer)),
      };
    }),
  };
}

/**
 * The parts of a checkpoint's partition, each from its position, read ahead; the set's answer is the
 * first part's meta with the set's counts.
 */
function resumedParts(
  client: Pick<ProspectClient, 'companies'>,
  partition: Partition,
  options: CompanyWalkOptions,
  answers: Array<QueryAnswer | undefined>,
): Array<MergeSource<CompanyRow>> {
  const asSet = (answer: QueryAnswer): void => {
    if (answer.kind !== 'meta' || answers[0] !== undefined) return;
    const { technologies: _technologies, ...meta } = answer.meta;
    answers[0] = { kind: 'meta', meta: { ...meta, total: partition.total, contact_count: partition.contact_count } };
  };
  return partition.queries.map((part, i) => {
    const start = options.positions?.[i] ?? START;
    return {
      start,
      pages: start.done
        ? emptyPages()
        : pagesFrom(client, part, start, { ahead: true, pageSize: options.pageSize }, asSet),
    };
  });
}

/**
 * What the service says of each query without walking it: one row of its first page, whose meta
 * counts the query (`total`, `contact_count`), or its no_match. One call per query, made at once;
 * any other refusal (an unknown name) is thrown. `countSet` makes these into the set's count.
 */
export async function answerQueries(
  client: Pick<ProspectClient, 'companies'>,
  queries: CompanyQuery[],
): Promise<QueryAnswer[]> {
  return Promise.all(
    queries.map(async (query): Promise<QueryAnswer> => {
      const pages = client.companies(query, { pageSize: 1 })[Symbol.asyncIterator]();
      try {
        const first = await pages.next();
        if (first.done) throw new Error('a companies listing ended before its first page');
        return { kind: 'meta', meta: first.value.meta };
      } catch (error) {
        if (!isNoMatch(error)) throw error;
        return { kind: 'no_match', error };
      } finally {
        await pages.return?.();
      }
    }),
  );
}

/**
 * The technologies checked here are never sent in the walk, so a typo among them would match nobody
 * and read as an empty result. Each is asked of the service once (one row), so an unknown name gets
 * the service's 422 unknown_technology and its suggestions before anything is written.
 */
export async function checkLocalTechnologies(
  client: Pick<ProspectClient, 'companies'>,
  filters: CompanyFilters,
): Promise<void> {
  const local = localTechnologies(filters);
  await answerQueries(
    client,
    [...local.required, ...local.excluded].map((technology) => ({ technology })),
  );
}

async function* pagesOf(
  client: Pick<ProspectClient, 'companies'>,
  query: CompanyQuery,
  start: WalkPosition,
  paging: { readAhead: boolean; pageSize: number | undefined; signal?: AbortSignal },
  answered: (answer: QueryAnswer) => void,
): AsyncGenerator<WalkPage<CompanyRow>, void, undefined> {
  const pages = client.companies(query, {
    startCursor: start.cursor ?? undefined,
    readAhead: paging.readAhead,
    pageSize: paging.pageSize,
    ...(paging.signal === undefined ? {} : { signal: paging.signal }),
  });
  try {
    for await (const page of pages) {
      answered({ kind: 'meta', meta: page.meta });
      yield { rows: page.data, cursor: page.cursor, nextCursor: page.nextCursor };
    }
  } catch (error) {
    // Only a first page can be no_match: this query's part of the set is empty.
    if (!(isNoMatch(error) && start.cursor === null)) throw error;
    answered({ kind: 'no_match', error });
  }
}

/**
 * A query's first page alone (undefined: the query is no_match), its listing closed at once: nothing
 * is asked ahead.
 */
async function firstPageOf(
  client: Pick<ProspectClient, 'companies'>,
  query: CompanyQuery,
  pageSize: number | undefined,
  answered: (answer: QueryAnswer) => void,
): Promise<WalkPage<CompanyRow> | undefined> {
  const pages = pagesOf(client, query, START, { readAhead: false, pageSize }, answered);
  try {
    const first = await pages.next();
    return first.done ? undefined : first.value;
  } finally {
    await pages.return(undefined);
  }
}

/** A listing whose first page is already here: that page, then the rest from its next cursor. */
function pagesAfter(
  client: Pick<ProspectClient, 'companies'>,
  query: CompanyQuery,
  first: WalkPage<CompanyRow>,
  paging: { ahead: boolean; pageSize: number | undefined },
  answered: (answer: QueryAnswer) => void,
): AsyncIterator<WalkPage<CompanyRow>> {
  const rest =
    first.nextCursor === null
      ? emptyPages()
      : pagesFrom(client, query, { cursor: first.nextCursor, skip: 0, done: false }, paging, answered);
  // Let go of the first page once handed out: the merge holds it while it needs it, not longer.
  let waiting: WalkPage<CompanyRow> | undefined = first;
  return {
    next: async () => {
      const page = waiting;
      waiting = undefined;
      return page === undefined ? rest.next() : { done: false, value: page };
    },
    return: async () => (await rest.return?.(undefined)) ?? { done: true, value: undefined },
  };
}

/**
 * A listing from a position. `ahead`: its first page is asked for now, not when the merge first
 * wants it, and each next page as soon as the one before has arrived (the client's read-ahead); so
 * a part whose rows come late in the merge still has its pages on the way. Closing it withdraws
 * whatever it has in flight, so a stop (--max, a failed part) ends every part at once.
 */
function pagesFrom(
  client: Pick<ProspectClient, 'companies'>,
  query: CompanyQuery,
  start: WalkPosition,
  paging: { ahead: boolean; pageSize: number | undefined },
  answered: (answer: QueryAnswer) => void,
): AsyncIterator<WalkPage<CompanyRow>> {
  const controller = new AbortController();
  const pages = pagesOf(
    client,
    query,
    start,
    { readAhead: paging.ahead, pageSize: paging.pageSize, signal: controller.signal },
    answered,
  );
  let asked = paging.ahead ? pages.next() : undefined;
  // Its failure is thrown when the merge takes it; until then it must not count as unhandled.
  asked?.catch(() => {});
  return {
    next: () => {
      const next = asked ?? pages.next();
      asked = undefined;
      return next;
    },
    return: async () => {
      controller.abort();
      // Whatever was in flight fails now; the listing then ends.
      await asked?.catch(() => undefined);
      await pages.return(undefined).catch(() => undefined);
      return { done: true, value: undefined };
    },
  };
}

async function* emptyPages(): AsyncGenerator<WalkPage<CompanyRow>, void, undefined> {}

/** No company in any query: the service's own answer when there was one query, else one for them all. */
async function* everyQueryOrNone(
  chunks: AsyncGenerator<MergedChunk<CompanyRow>, void, undefined>,
  answers: Array<QueryAnswer | undefined>,
): AsyncGenerator<MergedChunk<CompanyRow>, void, undefined> {
  try {
    for await (const chunk of chunks) {
      if (chunk.last && answers.length > 0 && answers.every((answer) => answer?.kind === 'no_match'))
        throw noneMatched(answers as Array<Extract<QueryAnswer, { kind: 'no_match' }>>);
      yield chunk;
    }
  } finally {
    await chunks.return(undefined);
  }
}

function noneMatched(answers: Array<Extract<QueryAnswer, { kind: 'no_match' }>>): UnanswerableError {
  if (answers.length === 1) return answers[0]!.error;
  const first = answers[0]!.error;
  return new UnanswerableError(
    `the service would not answer any of the ${answers.length} queries (422 no_match): ` +
      answers.map((answer) => answer.error.reason).join(' '),
    {
      status: 422,
      code: 'no_match',
      endpoint: first.endpoint,
      reason: 'no company matches any of the queries',
    },
  );
}
