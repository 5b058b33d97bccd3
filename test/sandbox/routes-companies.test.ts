/**
 * GET /api/v1/companies over real HTTP, compared with an independent filter of the dataset rows
 * (plain JavaScript over companyRow, not the sandbox's posting lists).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompanyRow, Dataset } from '../../src/sandbox/dataset/index.js';
import { call, allCompanyPages, qs } from '../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, testDataset, type TestSandbox } from '../helpers/sandbox.js';

let sandbox: TestSandbox;
let ds: Dataset;
let rows: CompanyRow[];
const key = SANDBOX_KEYS.free;

// The listing rules do not depend on the dataset's size: 5,000 companies page through every filter
// below in a tenth of the time of the suite's 50,000.
const COMPANIES = 5_000;

beforeAll(async () => {
  sandbox = await startTestSandbox({ companies: COMPANIES });
  ds = testDataset({ companies: COMPANIES });
  rows = Array.from({ length: ds.size }, (_, i) => ds.companyRow(i));
});
afterAll(() => sandbox.close());

const byListingOrder = (a: CompanyRow, b: CompanyRow) =>
  a.crux_rank - b.crux_rank || (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0);
const runs = (row: CompanyRow, name: string) => row.technologies.some((t) => t.t.toLowerCase() === name.toLowerCase());

function expected(filter: (row: CompanyRow) => boolean): CompanyRow[] {
  return rows.filter(filter).sort(byListingOrder);
}

/** Pages through a listing with the independent client: every page non-empty, no cursor twice. */
async function listAll(
  params: Record<string, string | number>,
): Promise<{ rows: CompanyRow[]; pages: number; metas: any[] }> {
  const pages = await allCompanyPages(sandbox.url, key, params);
  for (const page of pages) expect(page.data.length).toBeGreaterThan(0);
  const cursors = pages.map((page) => page.next_cursor).filter((cursor) => cursor !== null);
  expect(new Set(cursors).size).toBe(cursors.length);
  return { rows: pages.flatMap((page) => page.data), pages: pages.length, metas: pages.map((page) => page.meta) };
}

describe('pagination', () => {
  it.each([
    ['Shopify', 1000],
    ['Shopify', 37],
    ['jQuery', 1000],
  ])('visits every %s company exactly once, in listing order (limit %i)', async (technology, limit) => {
    const want = expected((r) => runs(r, technology));
    const got = await listAll({ technology, limit });
    expect(got.rows.map((r) => r.domain)).toEqual(want.map((r) => r.domain));
    // Whole rows too (as bytes: a deep comparison of 35,000 rows is needlessly slow).
    expect(JSON.stringify(got.rows)).toBe(JSON.stringify(want));
    expect(got.pages).toBe(Math.ceil(want.length / limit));
    for (const meta of got.metas) expect(meta.total).toBe(want.length);
  });

  it('defaults to 100 rows a page and answers the last page with next_cursor null', async () => {
    const first = await call(sandbox.url, `/api/v1/companies?technology=Klaviyo`, { key });
    expect(first.body.data).toHaveLength(100);
    expect(typeof first.body.next_cursor).toBe('string');
    const small = expected((r) => runs(r, 'Klaviyo') && r.country === 'ireland');
    expect(small.length).toBeGreaterThan(0);
    expect(small.length).toBeLessThan(100);
    const only = await call(sandbox.url, `/api/v1/companies?${qs({ technology: 'Klaviyo', country: 'ireland' })}`, {
      key,
    });
    expect(only.body.data).toHaveLength(small.length);
    expect(only.body.next_cursor).toBeNull();
  });

  it('is stable across calls: the same page twice is the same bytes', async () => {
    const path = `/api/v1/companies?${qs({ technology: 'WordPress', limit: 50 })}`;
    const a = await call(sandbox.url, path, { key });
    const b = await call(sandbox.url, path, { key });
    expect(a.text).toBe(b.text);
  });

  it('lets a client change the page size between pages (the cursor binds the filters, not the limit)', async () => {
    const want = expected((r) => runs(r, 'HubSpot')).slice(0, 30);
    const first = await call(sandbox.url, `/api/v1/companies?${qs({ technology: 'HubSpot', limit: 10 })}`, { key });
    const second = await call(
      sandbox.url,
      `/api/v1/companies?${qs({ technology: 'HubSpot', limit: 20, cursor: first.body.next_cursor })}`,
      { key },
    );
    expect([...first.body.data, ...second.body.data].map((r: CompanyRow) => r.domain)).toEqual(
      want.map((r) => r.domain),
    );
  });
});

describe('filters', () => {
  it('matches the technology case-insensitively and answers with the catalog spelling', async () => {
    const res = await call(sandbox.url, `/api/v1/companies?${qs({ technology: 'sHoPiFy', limit: 5 })}`, { key });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: CompanyRow) => r.domain)).toEqual(
      expected((r) => runs(r, 'Shopify'))
        .slice(0, 5)
        .map((r) => r.domain),
    );
    for (const row of res.body.data as CompanyRow[]) expect(row.technologies.map((t) => t.t)).toContain('Shopify');
  });

  it('excludes not_technology', async () => {
    const got = await listAll({ technology: 'Shopify', not_technology: 'klaviyo', limit: 1000 });
    expect(got.rows.map((r) => r.domain)).toEqual(
      expected((r) => runs(r, 'Shopify') && !runs(r, 'Klaviyo')).map((r) => r.domain),
    );
  });

  it('selects employee ranges by containment (11-500 → 11-50, 51-200, 201-500)', async () => {
    const got = await listAll({ technology: 'HubSpot', employee_range: '11-500', limit: 1000 });
    const want = expected((r) => runs(r, 'HubSpot') && ['11-50', '51-200', '201-500'].includes(r.employee_range));
    expect(got.rows.map((r) => r.domain)).toEqual(want.map((r) => r.domain));
    expect(new Set(got.rows.map((r) => r.employee_range))).toEqual(new Set(['11-50', '51-200', '201-500']));
    const exact = await listAll({ technology: 'HubSpot', employee_range: '51-200', limit: 1000 });
    expect(exact.rows.map((r) => r.domain)).toEqual(
      expected((r) => runs(r, 'HubSpot') && r.employee_range === '51-200').map((r) => r.domain),
    );
  });

  it('matches a country with a space, encoded as %20 or +, in any case', async () => {
    const want = expected((r) => runs(r, 'Shopify') && r.country === 'united kingdom').map((r) => r.domain);
    const pct = await call(sandbox.url, `/api/v1/companies?technology=Shopify&country=United%20Kingdom&limit=1000`, {
      key,
    });
    const plus = await call(sandbox.url, `/api/v1/companies?technology=Shopify&country=united+kingdom&limit=1000`, {
      key,
    });
    expect(pct.body.data.map((r: CompanyRow) => r.domain)).toEqual(want);
    expect(plus.text).toBe(pct.text);
  });

  it('takes several technologies of each kind (repeated parameters): all of them, none of them, counted and named in meta', async () => {
    const got = await listAll({ technology: 'Shopify', not_technology: 'Klaviyo', limit: 1000 });
    expect(got.rows.length).toBeGreaterThan(0);
    const query =
      'technology=Shopify&technology=cloudflare&not_technology=Klaviyo&not_technology=Shop%20Pay&limit=1000';
    const res = await call(sandbox.url, `/api/v1/companies?${query}`, { key });
    const want = expected(
      (r) => runs(r, 'Shopify') && runs(r, 'Cloudflare') && !runs(r, 'Klaviyo') && !runs(r, 'Shop Pay'),
    );
    expect(res.body.data.map((r: CompanyRow) => r.domain)).toEqual(want.slice(0, 1000).map((r) => r.domain));
    expect(res.body.meta.total).toBe(want.length);
    expect(res.body.meta.technologies).toEqual({ all_of: ['Shopify', 'Cloudflare'], none_of: ['Klaviyo', 'Shop Pay'] });
    const contradictory = await call(
      sandbox.url,
      '/api/v1/companies?technology=Shopify&technology=Klaviyo&not_technology=klaviyo',
      { key },
    );
    expect(contradictory.status).toBe(422);
    expect(contradictory.body.error.code).toBe('contradictory_filters');
  });

  it('lists the countries the country parameter accepts (GET /api/v1/countries)', async () => {
    const res = await call(sandbox.url, '/api/v1/countries', { key });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([...new Set(rows.map((r) => r.country))].sort());
  });

  it('combines every filter', async () => {
    const got = await listAll({
      technology: 'WordPress',
      not_technology: 'Yoast SEO',
      employee_range: '1-50',
      country: 'germany',
      limit: 200,
    });
    const want = expected(
      (r) =>
        runs(r, 'WordPress') &&
        !runs(r, 'Yoast SEO') &&
        ['1-10', '11-50'].includes(r.employee_range) &&
        r.country === 'germany',
    );
    expect(got.rows.map((r) => r.domain)).toEqual(want.map((r) => r.domain));
  });
});

describe('meta', () => {
  it('states source, fill rates, scope, total and the contact count of exactly the matching set', async () => {
    const res = await call(
      sandbox.url,
      `/api/v1/companies?${qs({ technology: 'Shopify', country: 'united states' })}`,
      { key },
    );
    const matching = [];
    for (let i = 0; i < ds.size; i++)
      if (ds.countryOf(i).name === 'united states' && ds.hasTechnology(i, ds.catalog.indexOf('Shopify')))
        matching.push(i);
    expect(res.body.meta).toEqual({
      source: {
        dataset: 'Web technology crawl',
        method: 'monthly crawl of rendered pages',
        publisher: expect.any(String),
        history_since: '2019',
      },
      field_fill_rates: ds.fillRates,
      scope: 'Companies whose site has a popularity (CrUX) rank of at most 1,000,000',
      total: matching.length,
      contact_count: matching.reduce((n, i) => n + (ds.contactCounts[i] as number), 0),
    });
    expect(res.body.meta.contact_count).toBeGreaterThan(0);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('returns description only on rows where it is filled, phone and linkedin_url as null otherwise', async () => {
    const res = await call(sandbox.url, `/api/v1/companies?${qs({ technology: 'jQuery', limit: 1000 })}`, { key });
    const data = res.body.data as CompanyRow[];
    expect(data.some((r) => 'description' in r)).toBe(true);
    expect(data.some((r) => !('description' in r))).toBe(true);
    expect(data.some((r) => r.phone === null)).toBe(true);
    for (const r of data)
      expect(Object.keys(r)).toEqual(
        expect.arrayContaining([
          'domain',
          'company_name',
          'employee_range',
          'industry',
          'country',
          'crux_rank',
          'phone',
          'linkedin_url',
          'tech_count',
          'technologies',
        ]),
      );
  });
});

describe('errors', () => {
  const get = (query: string) => call(sandbox.url, `/api/v1/companies?${query}`, { key });

  it.each([
    ['missing technology', 'country=germany', 'missing_parameter'],
    ['empty technology', 'technology=', 'missing_parameter'],
    ['limit 0', 'technology=Shopify&limit=0', 'invalid_parameter'],
    ['limit 1001', 'technology=Shopify&limit=1001', 'invalid_parameter'],
    ['limit not an integer', 'technology=Shopify&limit=10.5', 'invalid_parameter'],
    ['limit with a sign', 'technology=Shopify&limit=%2B10', 'invalid_parameter'],
    ['repeated parameter', 'technology=Shopify&country=germany&country=france', 'invalid_parameter'],
    ['unknown parameter', 'technology=Shopify&contry=germany', 'invalid_parameter'],
    ['malformed employee range', 'technology=Shopify&employee_range=lots', 'invalid_parameter'],
    ['reversed employee range', 'technology=Shopify&employee_range=500-11', 'invalid_parameter'],
    ['malformed percent-encoding', 'technology=Shop%ZZify', 'invalid_parameter'],
    ['forged cursor', 'technology=Shopify&cursor=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'invalid_cursor'],
    ['corrupt cursor', 'technology=Shopify&cursor=not*a*cursor', 'invalid_cursor'],
  ])('400 for %s', async (_, query, code) => {
    const res = await get(query);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe(code);
    expect(typeof res.body.error.reason).toBe('string');
  });

  it('400 invalid_cursor for a cursor from another query, or altered by one character', async () => {
    const page = await get(qs({ technology: 'Shopify', limit: 10 }));
    const cursor: string = page.body.next_cursor;
    const foreign = await get(qs({ technology: 'WordPress', limit: 10, cursor }));
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.code).toBe('invalid_cursor');
    const otherFilter = await get(qs({ technology: 'Shopify', country: 'germany', cursor }));
    expect(otherFilter.body.error.code).toBe('invalid_cursor');
    const flipped = cursor.slice(0, 10) + (cursor[10] === 'A' ? 'B' : 'A') + cursor.slice(11);
    const altered = await get(qs({ technology: 'Shopify', cursor: flipped }));
    expect(altered.body.error.code).toBe('invalid_cursor');
    // The same cursor with the same filters (other letter case) still works.
    expect((await get(qs({ technology: 'SHOPIFY', limit: 10, cursor }))).status).toBe(200);
  });

  it('422 unknown_technology with suggestions, for technology and not_technology', async () => {
    const res = await get(qs({ technology: 'Shopfiy' }));
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'unknown_technology', parameter: 'technology' });
    expect(res.body.error.suggestions[0]).toBe('Shopify');
    expect(res.body.error.suggestions.length).toBeLessThanOrEqual(5);
    expect(res.body.error.reason).toContain('Shopfiy');
    const prefix = await get(qs({ technology: 'Shopify', not_technology: 'klavi' }));
    expect(prefix.body.error).toMatchObject({ code: 'unknown_technology', parameter: 'not_technology' });
    expect(prefix.body.error.suggestions).toContain('Klaviyo');
    const commaList = await get(qs({ technology: 'Shopify,Klaviyo' }));
    expect(commaList.body.error.code).toBe('unknown_technology');
  });

  it('422 contradictory_filters when technology equals not_technology', async () => {
    const res = await get(qs({ technology: 'Shopify', not_technology: 'shopify' }));
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('contradictory_filters');
    expect(res.body.error.reason).toMatch(/Shopify/);
  });

  it('422 unknown_employee_range with the valid labels for a well-formed range that covers none', async () => {
    const res = await get(qs({ technology: 'Shopify', employee_range: '12-40' }));
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('unknown_employee_range');
    expect(res.body.error.valid_values).toEqual([
      '1-10',
      '11-50',
      '51-200',
      '201-500',
      '501-1000',
      '1001-5000',
      '5001-10000',
      '10001-100000',
    ]);
  });

  it('422 unknown_country with suggestions', async () => {
    const res = await get(qs({ technology: 'Shopify', country: 'united kingdon' }));
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('unknown_country');
    expect(res.body.error.suggestions[0]).toBe('united kingdom');
  });

  it('422 no_match, never an empty first page, for valid filters that match nobody', async () => {
    const unused = ds.catalog.names.findIndex((_, t) => ds.postingsOf(t).length === 0);
    const res = await get(qs({ technology: ds.catalog.names[unused] as string }));
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('no_match');
    const combined = await get(qs({ technology: 'Magento', country: 'new zealand', employee_range: '10001-100000' }));
    expect(combined.status).toBe(422);
    expect(combined.body.error.code).toBe('no_match');
    expect(combined.body.error.reason).toContain('Magento');
  });
});
