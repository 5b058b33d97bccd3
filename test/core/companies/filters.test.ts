import { describe, expect, it } from 'vitest';
import {
  companyFiltersSchema,
  companyQueries,
  filtersRecord,
  localRowFilter,
  normalizeCountries,
  queriesAreDisjoint,
  validateCompanyFilters,
  type CompanyFilters,
} from '../../../src/core/companies/filters.js';

const row = (...names: string[]) =>
  ({ domain: 'a.com', technologies: names.map((t) => ({ t, c: 'x', v: null })) }) as unknown as Parameters<
    NonNullable<ReturnType<typeof localRowFilter>>
  >[0];

const filters = (given: Partial<CompanyFilters>): CompanyFilters => ({
  technologies: ['Shopify'],
  notTechnologies: [],
  employeeRanges: [],
  countries: [],
  industries: [],
  maxRank: undefined,
  ...given,
});

describe('company filters', () => {
  it('sends the first technology of each kind to the service, one query per country and range', () => {
    expect(
      companyQueries(
        filters({
          technologies: ['Shopify', 'Stripe'],
          notTechnologies: ['Klaviyo', 'Attentive'],
          countries: ['united states'],
        }),
      ),
    ).toEqual([
      { technology: 'Shopify', notTechnology: 'Klaviyo', country: 'united states', employeeRange: undefined },
    ]);
    expect(companyQueries(filters({ countries: ['canada', 'france'], employeeRanges: ['1-10', '500+'] }))).toEqual([
      { technology: 'Shopify', notTechnology: undefined, country: 'canada', employeeRange: '1-10' },
      { technology: 'Shopify', notTechnology: undefined, country: 'canada', employeeRange: '500-100000' },
      { technology: 'Shopify', notTechnology: undefined, country: 'france', employeeRange: '1-10' },
      { technology: 'Shopify', notTechnology: undefined, country: 'france', employeeRange: '500-100000' },
    ]);
  });

  it('checks the others on the whole stack, case-insensitively', () => {
    const keep = localRowFilter(
      filters({ technologies: ['Shopify', 'stripe'], notTechnologies: ['Klaviyo', 'attentive'] }),
    )!;
    expect(keep(row('Shopify', 'Stripe'))).toBe(true);
    expect(keep(row('Shopify'))).toBe(false);
    expect(keep(row('Shopify', 'Stripe', 'Attentive'))).toBe(false);
  });

  it('needs no local filter for a single technology', () => {
    expect(localRowFilter(filters({ notTechnologies: ['Klaviyo'] }))).toBeUndefined();
  });

  it('knows when the queries cannot share a company (their counts then add up)', () => {
    expect(queriesAreDisjoint(filters({ employeeRanges: ['1-10', '51-200', '501+'] }))).toBe(true);
    expect(queriesAreDisjoint(filters({ employeeRanges: ['1-50', '11-200'] }))).toBe(false);
    expect(queriesAreDisjoint(filters({ employeeRanges: ['11-500', '200+'] }))).toBe(false);
  });

  it.each([
    [{ technologies: [] }, /--technology is required/],
    [{ notTechnologies: ['shopify'] }, /both a --technology and a --not-technology/],
    [{ employeeRanges: ['500-11'] }, /--employee-range/],
    [{ employeeRanges: ['small'] }, /--employee-range/],
    [{ employeeRanges: ['+500'] }, /--employee-range/],
    [{ technologies: [' '] }, /--technology is required/],
    [{ countries: [''] }, /--country cannot be empty/],
  ])('rejects %j before any call', (given, message) => {
    expect(() => validateCompanyFilters(filters(given))).toThrow(message);
  });
});

describe('company filter flags', () => {
  it('take lists and repeats of ranges, and drop repeats', () => {
    const parsed = companyFiltersSchema.parse({
      technology: ['Shopify'],
      notTechnology: [],
      employeeRange: ['1-10,51-200', '51-200', '10001+'],
      country: ['canada', 'canada'],
    });
    expect(parsed).toEqual({
      technologies: ['Shopify'],
      notTechnologies: [],
      employeeRanges: ['1-10', '51-200', '10001+'],
      countries: ['canada'],
      industries: [],
      maxRank: undefined,
    });
  });

  it('are recorded under the names the sidecar and the checkpoint fingerprint have always used: one value stays a string', () => {
    const one = companyFiltersSchema.parse({
      technology: ['Shopify', 'Stripe'],
      notTechnology: [],
      employeeRange: ['11-50'],
      country: ['france'],
    });
    expect(JSON.stringify(filtersRecord(one))).toBe(
      '{"technologies":["Shopify","Stripe"],"notTechnologies":[],"employeeRange":"11-50","country":"france"}',
    );
    const several = companyFiltersSchema.parse({
      technology: ['Shopify'],
      notTechnology: [],
      country: ['france', 'spain'],
    });
    expect(JSON.stringify(filtersRecord(several))).toBe(
      '{"technologies":["Shopify"],"notTechnologies":[],"country":["france","spain"]}',
    );
  });

  it('leave out what was not given', () => {
    expect(
      JSON.stringify(
        filtersRecord(companyFiltersSchema.parse({ technology: ['Shopify'], notTechnology: ['Klaviyo'] })),
      ),
    ).toBe('{"technologies":["Shopify"],"notTechnologies":["Klaviyo"]}');
  });

  it('name countries as the service does, whatever way they were written, once each', async () => {
    const normalized = await normalizeCountries(
      filters({ countries: ['USA', 'us', 'United States', 'UK', 'gb', 'Deutschland', 'narnia'] }),
    );
    expect(normalized.countries).toEqual(['united states', 'united kingdom', 'germany', 'narnia']);
  });
});
