/**
 * How big a filter set is, asked of the service without listing it: one call per service query
 * (its first page's meta, contract row 17). Several technologies of a kind are sent as repeated
 * parameters (contract row 4), so the service counts the set itself; a service that refuses them
 * (400) or ignores them (no `meta.technologies` naming them) leaves a walk of the set, whose
 * companies are counted here and whose contacts cannot be (they are not in company rows).
 */
import {
  BadRequestError,
  type CompaniesMeta,
  type CompanyQuery,
  type CompanyRow,
  type ProspectClient,
} from '../../api/index.js';
import {
  companyQueries,
  filtersRows,
  localRowFilter,
  localTechnologies,
  type CompanyFilters,
} from '../companies/filters.js';
import { appliedAsSent, type SplitOptions } from '../companies/split.js';
import { countSet, setMeta } from '../companies/set-count.js';
import { answerQueries, checkLocalTechnologies, walkCompanies, type QueryAnswer } from '../companies/walk.js';
import { Semaphore } from '../../util/ordered-pool.js';

/** A set's size and how it was known. `contacts` is undefined where nobody counted them. */
export interface SetSize {
  companies: number;
  contacts: number | undefined;
  /** Counted by the service (false: by walking the set's rows). */
  byService: boolean;
  meta: CompaniesMeta | undefined;
  /** The service queries as they were sent. */
  queries: CompanyQuery[];
}

/** Every technology of the filters sent to the service: the first of each kind, the rest repeated. */
export function serviceQueries(filters: CompanyFilters): CompanyQuery[] {
  const local = localTechnologies(filters);
  return companyQueries(filters).map((query) => ({
    ...query,
    ...(local.required.length > 0 ? { moreTechnologies: local.required } : {}),
    ...(local.excluded.length > 0 ? { moreNotTechnologies: local.excluded } : {}),
  }));
}

/** The queries' answers, at most `concurrency` calls at once (each query: one call). */
export async function answerAll(
  client: Pick<ProspectClient, 'companies'>,
  queries: CompanyQuery[],
  concurrency: number,
): Promise<QueryAnswer[]> {
  const slots = new Semaphore(concurrency);
  return Promise.all(queries.map((query) => slots.run(async () => (await answerQueries(client, [query]))[0]!)));
}

/**
 * The set's size from the service's answers to serviceQueries(filters), or undefined when they do
 * not count the set: a query the service answered without applying every technology sent, or
 * queries that can share a company (their counts do not add up).
 */
export function sizeFromAnswers(
  filters: CompanyFilters,
  queries: CompanyQuery[],
  answers: QueryAnswer[],
): SetSize | undefined {
  // A no_match is right either way: a service that ignored the others found nobody for the first.
  if (!answers.every((answer, i) => answer.kind === 'no_match' || appliedAsSent(queries[i]!, answer.meta)))
    return undefined;
  // The service applied every technology: its counts are the set's, as for a query of one of each kind.
  const asServiceSet = {
    ...filters,
    technologies: filters.technologies.slice(0, 1),
    notTechnologies: filters.notTechnologies.slice(0, 1),
  };
  const count = countSet(asServiceSet, answers);
  if (!count.exact) return undefined;
  return {
    companies: count.companies,
    contacts: count.contacts,
    byService: true,
    meta: setMeta(asServiceSet, answers),
    queries,
  };
}

/** Whether the failure is a service refusing repeated technologies (contract row 4 of an older service). */
export function refusesRepeatedTechnologies(error: unknown, filters: CompanyFilters): boolean {
  const local = localTechnologies(filters);
  return error instanceof BadRequestError && local.required.length + local.excluded.length > 0;
}

/** The set's size as the service counts it, or undefined when it cannot (the caller then walks). */
export async function askSetSize(
  client: Pick<ProspectClient, 'companies'>,
  filters: CompanyFilters,
  concurrency: number,
): Promise<SetSize | undefined> {
  // No parameter carries an industry or a rank (contract row 38): only a walk counts such a set.
  if (filtersRows(filters)) return undefined;
  const queries = serviceQueries(filters);
  try {
    return sizeFromAnswers(filters, queries, await answerAll(client, queries, concurrency));
  } catch (error) {
    if (refusesRepeatedTechnologies(error, filters)) return undefined;
    throw error;
  }
}

export interface SetWalk {
  /** Pages the walk will ask for (from each query's count and the page size). */
  pages: number;
  /** Companies of the service's (wider) queries. */
  serviceCompanies: number;
  /** Walks the set: `onRow` gets every company of the set, `onPage` after each page. */
  run(onRow: (row: CompanyRow) => void, onPage: (page: number) => void): Promise<SetSize>;
}

/**
 * A walk of the set: the queries of the first technology of each kind, the others checked on each
 * row (as `companies` does). Its cost in pages is known before it starts.
 */
export async function planSetWalk(
  client: Pick<ProspectClient, 'companies'>,
  filters: CompanyFilters,
  pageSize: number,
  concurrency: number,
  /**
   * False for a company the count leaves out (--exclude-domains); the service's contact count then
   * no longer applies.
   */
  accept?: (row: CompanyRow) => boolean,
  /** Split a long listing into parts walked at once (companies/split.ts). */
  split?: SplitOptions,
): Promise<SetWalk> {
  await checkLocalTechnologies(client, filters);
  const queries = companyQueries(filters);
  const answers = await answerAll(client, queries, concurrency);
  const totals = answers.map((answer) => (answer.kind === 'meta' ? (answer.meta.total ?? 0) : 0));
  const keep = localRowFilter(filters);
  return {
    pages: totals.reduce((sum, total) => sum + Math.max(total > 0 ? 1 : 0, Math.ceil(total / pageSize)), 0),
    serviceCompanies: totals.reduce((sum, total) => sum + total, 0),
    async run(onRow, onPage) {
      const walk = walkCompanies(client, queries, { readAhead: true, pageSize, split });
      let companies = 0;
      let pages = 0;
      for await (const chunk of walk.chunks) {
        for (const row of chunk.rows) {
          if (keep && !keep(row)) continue;
          if (accept && !accept(row)) continue;
          companies += 1;
          onRow(row);
        }
        pages += 1;
        onPage(pages);
      }
      const exact = countSet(filters, walk.answers);
      return {
        companies,
        contacts: exact.exact && !accept ? exact.contacts : undefined,
        byService: false,
        meta: setMeta(filters, walk.answers),
        queries,
      };
    },
  };
}
