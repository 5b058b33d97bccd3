import type { RouteStub } from './route-stub.js';

/**
 * Rows as the service's contract writes them, for route stubs (test/helpers/route-stub.ts): one company
 * on Shopify, one CEO contact of a domain with a dated address.
 */
const company = (domain: string) => ({
  domain,
  company_name: domain.toUpperCase(),
  employee_range: '11-50',
  industry: 'retail',
  country: 'united states',
  crux_rank: 1000,
  tech_count: 1,
  technologies: [{ t: 'Shopify', c: 'ecommerce' }],
});

const contact = (domain: string, first: string) => ({
  domain,
  full_name: `${first} Lee`,
  first_name: first,
  last_name: 'Lee',
  title: 'CEO',
  seniority: 'cxo',
  department: 'executive',
  business_email: `${first.toLowerCase()}@${domain}`,
  business_email_last_seen: '2026-06-20',
  linkedin_url: null,
});

/** A pipeline's smallest set on a stub: a.com and b.com on Shopify in one page, their two contacts in one call. */
export function routeTwoCompanies(stub: RouteStub): RouteStub {
  stub.route(
    'GET',
    '/api/v1/companies',
    { technology: 'Shopify' },
    { body: { data: [company('a.com'), company('b.com')], meta: { total: 2 }, next_cursor: null } },
  );
  stub.route(
    'GET',
    '/api/v1/contacts',
    { domain: 'a.com,b.com' },
    { body: { data: [contact('a.com', 'Ann'), contact('b.com', 'Bob')], next_cursor: null } },
  );
  return stub;
}
