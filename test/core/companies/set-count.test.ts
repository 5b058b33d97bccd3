import { describe, expect, it } from 'vitest';
import type { CompaniesMeta } from '../../../src/api/index.js';
import type { CompanyFilters } from '../../../src/core/companies/filters.js';
import { countRecord, countSet, setMeta, widerCountText } from '../../../src/core/companies/set-count.js';
import type { QueryAnswer } from '../../../src/core/companies/walk.js';
import { UnanswerableError } from '../../../src/api/index.js';

const filters = (given: Partial<CompanyFilters>): CompanyFilters => ({
  technologies: ['WordPress'],
  notTechnologies: [],
  employeeRanges: [],
  countries: [],
  industries: [],
  maxRank: undefined,
  ...given,
});
const meta = (total: number | undefined, contacts: number | undefined, phone = 10): QueryAnswer => ({
  kind: 'meta',
  meta: {
    source: { dataset: 'd', method: 'm', publisher: 'p', history_since: '2019' },
    scope: 's',
    field_fill_rates: { phone },
    total,
    contact_count: contacts,
  } as CompaniesMeta,
});
const nobody: QueryAnswer = { kind: 'no_match', error: new UnanswerableError('nobody', { code: 'no_match' }) };

describe('the count of the set a user built', () => {
  it('adds up the counts of queries that cannot share a company; a no_match query counts 0', () => {
    expect(
      countSet(filters({ countries: ['canada', 'france', 'spain'] }), [meta(10, 100), meta(5, 7), nobody]),
    ).toEqual({ exact: true, companies: 15, contacts: 107 });
  });

  it('gives no number for overlapping ranges or a query without a count', () => {
    expect(countSet(filters({ employeeRanges: ['1-50', '11-200'] }), [meta(10, 1), meta(5, 1)])).toEqual({
      exact: false,
      wider: undefined,
    });
    expect(countSet(filters({}), [meta(undefined, undefined)])).toEqual({ exact: false, wider: undefined });
  });

  it('names a count the service made without the local technologies as wider, and says which are applied locally', () => {
    const count = countSet(
      filters({ technologies: ['WordPress', 'WooCommerce'], notTechnologies: ['Wix', 'Klaviyo'] }),
      [meta(16595, 9)],
    );
    expect(count.exact).toBe(false);
    expect(widerCountText((count as { wider: NonNullable<Parameters<typeof widerCountText>[0]> }).wider)).toBe(
      '16,595 run WordPress but not Wix; the WooCommerce and not Klaviyo filters are applied locally',
    );
    expect(countRecord(count)).toEqual({
      service_count: {
        companies: 16595,
        contacts: 9,
        counts: 'companies that run WordPress but not Wix',
        applied_locally: ['WooCommerce', 'not Klaviyo'],
      },
    });
  });

  it('one company is "runs"', () => {
    const count = countSet(filters({ technologies: ['WordPress', 'WooCommerce'] }), [meta(1, 1)]);
    expect(widerCountText((count as { wider: NonNullable<Parameters<typeof widerCountText>[0]> }).wider)).toMatch(
      /^1 runs WordPress; the WooCommerce filter is applied locally$/,
    );
  });
});

describe('the meta of a set walked as several queries', () => {
  it('weights each fill rate by the companies of each query', () => {
    expect(setMeta(filters({ countries: ['a', 'b'] }), [meta(30, 0, 10), meta(10, 0, 50)])?.field_fill_rates).toEqual({
      phone: 20,
    });
  });

  it("is the service's own for one query, and has no rates where the weights are unknown", () => {
    const one = meta(3, 3);
    expect(setMeta(filters({}), [one])).toBe((one as { meta: CompaniesMeta }).meta);
    expect(
      setMeta(filters({ employeeRanges: ['1-50', '11-200'] }), [meta(30, 0), meta(10, 0)])?.field_fill_rates,
    ).toEqual({});
  });
});
