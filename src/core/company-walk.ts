/**
 * The companies of a filter set, walked as its service queries (companyQueries) and merged into the
 * service's order (contract row 6: crux_rank, then domain), each company once. A query the service
 * answers with `no_match` is an empty part of the set; when every query does, that answer stands.
 */
import { UnanswerableError, type CompaniesMeta, type CompanyQuery, type CompanyRow, type ProspectClient } from '../api/index.js';
import { localTechnologies, type CompanyFilters } from './company-filters.js';
import { mergeWalks, START, type MergedChunk, type WalkPage, type WalkPosition } from './merge-walks.js';

export interface CompanyWalkOptions {
  /** Where each query stands (a checkpoint's positions); from the start without. */
  positions?: WalkPosition[] | undefined;
  /** Let the client ask for each query's next page ahead (never with --max: no call for a page not written). */
  readAhead?: boolean;
  /** Rows per page; the client's page size without. */
  pageSize?: number | undefined;
}

/** What the service said of one query: its first page's meta, or that it matches nobody. */
export type QueryAnswer = { kind: 'meta'; meta: CompaniesMeta } | { kind: 'no_match'; error: UnanswerableError };

export interface CompanyWalk {
  chunks: AsyncGenerator<MergedChunk<CompanyRow>, void, undefined>;
  /** One per query, filled in as each query's first page (or its no_match) arrives. */
  answers: Array<QueryAnswer | undefined>;
}

/** The contract's order of company rows: crux_rank ascending, then domain by code points. */
export function compareCompanies(a: CompanyRow, b: CompanyRow): number {
  if (a.crux_rank !== b.crux_rank) return a.crux_rank - b.crux_rank;
  return a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0;
}

export function isNoMatch(error: unknown): error is UnanswerableError {
  return error instanceof UnanswerableError && error.code === 'no_match';
}

export function walkCompanies(client: Pick<ProspectClient, 'companies'>, queries: CompanyQuery[], options: CompanyWalkOptions = {}): CompanyWalk {
  if (options.positions !== undefined && options.positions.length !== queries.length) {
    throw new Error(`a walk of ${queries.length} queries cannot resume from ${options.positions.length} positions`);
  }
  const answers: Array<QueryAnswer | undefined> = queries.map(() => undefined);
  const sources = queries.map((query, i) => {
    const start = options.positions?.[i] ?? START;
    return { start, pages: start.done ? emptyPages() : pagesOf(client, query, start, { readAhead: options.readAhead ?? false, pageSize: options.pageSize }, (answer) => (answers[i] ??= answer)) };
  });
  return { chunks: everyQueryOrNone(mergeWalks(sources, compareCompanies, 'companies'), answers), answers };
}

/**
 * What the service says of each query without walking it: one row of its first page, whose meta
 * counts the query (`total`, `contact_count`), or its no_match. One call per query, made at once;
 * any other refusal (an unknown name) is thrown. `countSet` makes these into the set's count.
 */
export async function answerQueries(client: Pick<ProspectClient, 'companies'>, queries: CompanyQuery[]): Promise<QueryAnswer[]> {
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
export async function checkLocalTechnologies(client: Pick<ProspectClient, 'companies'>, filters: CompanyFilters): Promise<void> {
  const local = localTechnologies(filters);
  await answerQueries(client, [...local.required, ...local.excluded].map((technology) => ({ technology })));
}

async function* pagesOf(
  client: Pick<ProspectClient, 'companies'>,
  query: CompanyQuery,
  start: WalkPosition,
  paging: { readAhead: boolean; pageSize: number | undefined },
  answered: (answer: QueryAnswer) => void,
): AsyncGenerator<WalkPage<CompanyRow>, void, undefined> {
  const pages = client.companies(query, { startCursor: start.cursor ?? undefined, readAhead: paging.readAhead, pageSize: paging.pageSize });
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

async function* emptyPages(): AsyncGenerator<WalkPage<CompanyRow>, void, undefined> {}

/** No company in any query: the service's own answer when there was one query, else one for them all. */
async function* everyQueryOrNone(
  chunks: AsyncGenerator<MergedChunk<CompanyRow>, void, undefined>,
  answers: Array<QueryAnswer | undefined>,
): AsyncGenerator<MergedChunk<CompanyRow>, void, undefined> {
  try {
    for await (const chunk of chunks) {
      if (chunk.last && answers.length > 0 && answers.every((answer) => answer?.kind === 'no_match')) throw noneMatched(answers as Array<Extract<QueryAnswer, { kind: 'no_match' }>>);
      yield chunk;
    }
  } finally {
    await chunks.return(undefined);
  }
}

function noneMatched(answers: Array<Extract<QueryAnswer, { kind: 'no_match' }>>): UnanswerableError {
  if (answers.length === 1) return answers[0]!.error;
  const first = answers[0]!.error;
  return new UnanswerableError(`the service would not answer any of the ${answers.length} queries (422 no_match): ${answers.map((answer) => answer.error.reason).join(' ')}`, {
    status: 422,
    code: 'no_match',
    endpoint: first.endpoint,
    reason: 'no company matches any of the queries',
  });
}
