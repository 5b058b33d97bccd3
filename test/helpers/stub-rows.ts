/**
 * Rows as the service's contract writes them, for route stubs (test/helpers/route-stub.ts): one company
 * on Shopify, one CEO contact of a domain with a dated address.
 */
export const company = (domain: string) => ({
  domain,
  company_name: domain.toUpperCase(),
  employee_range: '11-50',
  industry: 'retail',
  country: 'united states',
  crux_rank: 1000,
  tech_count: 1,
  technologies: [{ t: 'Shopify', c: 'ecommerce' }],
});

export const contact = (domain: string, first: string) => ({
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
