import { describe, expect, it } from 'vitest';
import { companyFiltersSchema, localStackFilter, serviceQuery, validateCompanyFilters } from '../../src/core/company-filters.js';

const row = (...names: string[]) =>
  ({ domain: 'a.com', technologies: names.map((t) => ({ t, c: 'x', v: null })) }) as unknown as Parameters<
    NonNullable<ReturnType<typeof localStackFilter>>
  >[0];

describe('company filters', () => {
  it('sends the first technology of each kind to the service', () => {
    expect(
      serviceQuery({ technologies: ['Shopify', 'Stripe'], notTechnologies: ['Klaviyo', 'Attentive'], country: 'United States' }),
    ).toEqual({ technology: 'Shopify', notTechnology: 'Klaviyo', country: 'united states' });
  });

  it('checks the others on the whole stack, case-insensitively', () => {
    const keep = localStackFilter({ technologies: ['Shopify', 'stripe'], notTechnologies: ['Klaviyo', 'attentive'] })!;
    expect(keep(row('Shopify', 'Stripe'))).toBe(true);
    expect(keep(row('Shopify'))).toBe(false);
    expect(keep(row('Shopify', 'Stripe', 'Attentive'))).toBe(false);
  });

  it('needs no local filter for a single technology', () => {
    expect(localStackFilter({ technologies: ['Shopify'], notTechnologies: ['Klaviyo'] })).toBeUndefined();
  });

  it.each([
    [{ technologies: [], notTechnologies: [] }, /--technology is required/],
    [{ technologies: ['Shopify'], notTechnologies: ['shopify'] }, /both a --technology and a --not-technology/],
    [{ technologies: ['Shopify'], notTechnologies: [], employeeRange: '500-11' }, /--employee-range/],
    [{ technologies: ['Shopify'], notTechnologies: [], employeeRange: 'small' }, /--employee-range/],
    [{ technologies: [' '], notTechnologies: [] }, /--technology is required/],
  ])('rejects %j before any call', (filters, message) => {
    expect(() => validateCompanyFilters(filters)).toThrow(message);
  });
});

describe('company filter flags', () => {
  it('become the filters under the names the sidecar and the checkpoint fingerprint have always used, in that order', () => {
    const filters = companyFiltersSchema.parse({ technology: ['Shopify', 'Stripe'], notTechnology: [], employeeRange: '11-50', country: 'france' });
    expect(JSON.stringify(filters)).toBe('{"technologies":["Shopify","Stripe"],"notTechnologies":[],"employeeRange":"11-50","country":"france"}');
  });

  it('leave out what was not given', () => {
    expect(JSON.stringify(companyFiltersSchema.parse({ technology: ['Shopify'], notTechnology: ['Klaviyo'] }))).toBe('{"technologies":["Shopify"],"notTechnologies":["Klaviyo"]}');
  });
});
