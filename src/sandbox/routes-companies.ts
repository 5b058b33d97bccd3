/** GET /api/v1/companies (spec §4.1, contract rows 1-7, 14-17). */
import type { Dataset } from './dataset/dataset.js';
import type { CompanyQueryEngine } from './company-query.js';
import type { CursorCodec } from './cursor.js';
import { unprocessable } from './errors.js';
import { integerParameter, singleValues } from './query.js';
import type { ApiRequest, Reply, Route } from './types.js';

const COMPANY_SOURCE = {
  dataset: 'Web technology crawl',
  method: 'monthly crawl of rendered pages',
  publisher: 'prospect sandbox (synthetic data)',
  history_since: '2019',
} as const;

const COMPANY_SCOPE = 'Companies whose site has a popularity (CrUX) rank of at most 1,000,000';

const PARAMETERS = ['technology', 'not_technology', 'employee_range', 'country', 'limit', 'cursor'] as const;
const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 1000;

/**
 * GET /api/v1/countries (contract row 36): every value the `country` parameter accepts, the
 * dataset's countries in its lower-case spelling, so a client can break a set down by country with
 * one query per country and none for a country that has no company.
 */
export function countriesRoute(dataset: Dataset): Route {
  return (request: ApiRequest): Reply => {
    singleValues(request.query, []);
    return { status: 200, body: { data: [...dataset.countriesPresent].sort() } };
  };
}

export function companiesRoute(dataset: Dataset, engine: CompanyQueryEngine, cursors: CursorCodec): Route {
  return (request: ApiRequest): Reply => {
    // technology and not_technology may repeat (contract row 4): all of them, none of them.
    const params = singleValues(request.query, PARAMETERS, ['technology', 'not_technology']);
    const limit = integerParameter('limit', params.limit, 1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE);
    // The cursor's seal is checked with the other 400s; its binding needs the resolved query.
    const cursor = params.cursor === undefined ? undefined : cursors.decode(params.cursor);
    const filters = engine.resolve({
      ...params,
      technology: request.query.get('technology') ?? [],
      not_technology: request.query.get('not_technology') ?? [],
    });
    if (cursor) cursors.assertBelongsTo(cursor, filters.key);

    const totals = engine.totals(filters);
    if (totals.total === 0) {
      throw unprocessable(
        'no_match',
        `No company in scope (CrUX rank at most 1,000,000) matches: ${engine.describe(filters)}.`,
      );
    }
    const applied = engine.appliedTechnologies(filters);
    const page = engine.page(filters, cursor ? cursor.position : -1, limit);
    const last = page.companies[page.companies.length - 1];
    const rows = page.companies.map((i) => dataset.companyRowJson(i));
    const meta = {
      // Which crawl answered (contract row 39): said only when a month was asked for.
      source: dataset.crawl === undefined ? COMPANY_SOURCE : { ...COMPANY_SOURCE, crawl: dataset.crawl },
      field_fill_rates: dataset.fillRates,
      scope: COMPANY_SCOPE,
      total: totals.total,
      contact_count: totals.contactCount,
      ...(applied === undefined ? {} : { technologies: applied }),
    };
    const nextCursor = page.hasMore && last !== undefined ? cursors.encode(filters.key, last) : null;
    return {
      status: 200,
      body: { data: rows, meta, next_cursor: nextCursor },
      // The rows are JSON already: the page is assembled, not serialised (see companyRowJson).
      json: `{"data":[${rows.join(',')}],"meta":${JSON.stringify(meta)},"next_cursor":${JSON.stringify(nextCursor)}}`,
    };
  };
}
