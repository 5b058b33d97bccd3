/** GET /api/v1/contacts over real HTTP: plan gate, input rules, ordering, the limit cut, fields. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SENIORITIES, type Contact, type Dataset } from '../../src/sandbox/dataset/index.js';
import {
  call,
  qs,
  SANDBOX_KEYS,
  startTestSandbox,
  TEST_AS_OF,
  testDataset,
  type TestSandbox,
} from '../helpers/sandbox.js';

let sandbox: TestSandbox;
let ds: Dataset;
/** Domains with contacts, a few with many. */
let withContacts: string[];

beforeAll(async () => {
  sandbox = await startTestSandbox();
  ds = testDataset();
  withContacts = [];
  for (let i = 0; i < ds.size && withContacts.length < 120; i += 13)
    if ((ds.contactCounts[i] as number) > 0) withContacts.push(ds.domains[i] as string);
});
afterAll(() => sandbox.close());

const contactsPath = (params: Record<string, string | number | undefined>) => `/api/v1/contacts?${qs(params)}`;
const recordsOf = (domain: string): Contact[] => ds.contactsOf(ds.companyIndex(domain) as number, TEST_AS_OF);

/** The contract's order, computed independently with a comparator. */
function expectedOrder(domains: string[], seniorities?: string[]): Contact[] {
  const all = domains.flatMap((d, domainOrder) => recordsOf(d).map((c, record) => ({ c, domainOrder, record })));
  return all
    .filter(({ c }) => !seniorities || seniorities.includes(c.seniority))
    .sort(
      (a, b) =>
        SENIORITIES.indexOf(a.c.seniority) - SENIORITIES.indexOf(b.c.seniority) ||
        Number(a.c.business_email === null) - Number(b.c.business_email === null) ||
        a.domainOrder - b.domainOrder ||
        a.record - b.record,
    )
    .map(({ c }) => c);
}

describe('plan gate', () => {
  it.each([['free'], ['starter']] as const)(
    '403 plan_required for the %s plan, before looking at parameters',
    async (plan) => {
      for (const path of [
        contactsPath({ domain: withContacts[0] }),
        contactsPath({ limit: 'x' }),
        '/api/v1/contacts?domain=%ZZ',
      ]) {
        const res = await call(sandbox.url, path, { key: SANDBOX_KEYS[plan] });
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('plan_required');
      }
    },
  );

  it.each([['growth'], ['scale']] as const)('200 for the %s plan', async (plan) => {
    const res = await call(sandbox.url, contactsPath({ domain: withContacts[0] }), { key: SANDBOX_KEYS[plan] });
    expect(res.status).toBe(200);
  });
});

describe('results', () => {
  const key = SANDBOX_KEYS.growth;

  it('orders by seniority, then contacts with an e-mail, then request-domain order, then record order', async () => {
    const domains = withContacts.slice(0, 6).reverse();
    const res = await call(sandbox.url, contactsPath({ domain: domains.join(','), limit: 1000 }), { key });
    const want = expectedOrder(domains);
    expect(res.body.data).toEqual(want.slice(0, 1000));
    const ranks = (res.body.data as Contact[]).map((c) => SENIORITIES.indexOf(c.seniority));
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
  });

  it('cuts at limit after the least senior, and says so in meta', async () => {
    const domains = withContacts.slice(10, 40);
    const res = await call(sandbox.url, contactsPath({ domain: domains.join(','), limit: 25 }), { key });
    expect(res.body.data).toEqual(expectedOrder(domains).slice(0, 25));
    expect(res.body.data).toHaveLength(25);
    expect(res.body.meta).toEqual({
      source: {
        dataset: expect.any(String),
        method: 'licensed',
        publisher: expect.any(String),
        license: expect.any(String),
      },
      domains_requested: 30,
      limit: 25,
    });
    expect(res.body.next_cursor).toBeNull();
  });

  it('defaults limit to 200', async () => {
    const domains = withContacts.slice(0, 100);
    const res = await call(sandbox.url, contactsPath({ domain: domains.join(',') }), { key });
    expect(res.body.meta.limit).toBe(200);
    expect(res.body.data).toEqual(expectedOrder(domains).slice(0, 200));
  });

  it('filters by seniority and trims, lower-cases and de-duplicates domains', async () => {
    const [a, b] = [withContacts[2] as string, withContacts[3] as string];
    const res = await call(
      sandbox.url,
      contactsPath({ domain: ` ${a.toUpperCase()} ,${b},${a}`, seniority: 'VP, cxo', limit: 1000 }),
      { key },
    );
    expect(res.status).toBe(200);
    expect(res.body.meta.domains_requested).toBe(2);
    expect(res.body.data).toEqual(expectedOrder([a, b], ['cxo', 'vp']));
  });

  it('returns every contact field, with null where a value is missing', async () => {
    const domain = withContacts.find((d) => recordsOf(d).some((c) => c.business_email === null)) as string;
    const res = await call(sandbox.url, contactsPath({ domain, limit: 1000 }), { key });
    for (const c of res.body.data as Contact[]) {
      expect(Object.keys(c).sort()).toEqual([
        'business_email',
        'business_email_last_seen',
        'department',
        'domain',
        'first_name',
        'full_name',
        'last_name',
        'linkedin_url',
        'seniority',
        'title',
      ]);
      expect(c.domain).toBe(domain);
    }
    expect(
      (res.body.data as Contact[]).some((c) => c.business_email === null && c.business_email_last_seen === null),
    ).toBe(true);
  });

  it('answers 200 with no rows for unknown domains and domains without contacts', async () => {
    const without = ds.domains[ds.contactCounts.findIndex((n) => n === 0)] as string;
    const res = await call(sandbox.url, contactsPath({ domain: `unknown-domain-xyz.com,${without}` }), { key });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
  });
});

describe('input errors', () => {
  const key = SANDBOX_KEYS.scale;
  const expect400 = async (params: Record<string, string | number | undefined>, code: string) => {
    const res = await call(sandbox.url, contactsPath(params), { key });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe(code);
    return res.body.error;
  };

  it('400 too_many_domains over 100 distinct domains', async () => {
    const many = Array.from({ length: 101 }, (_, i) => `d${i}.com`).join(',');
    await expect400({ domain: many }, 'too_many_domains');
    // 100 distinct (with repeats) is fine.
    const hundred = Array.from({ length: 100 }, (_, i) => `d${i}.com`);
    const res = await call(sandbox.url, contactsPath({ domain: [...hundred, ...hundred].join(',') }), { key });
    expect(res.status).toBe(200);
  });

  it('400 for a bad seniority, listing the valid values', async () => {
    const error = await expect400({ domain: 'a.com', seniority: 'ceo' }, 'invalid_parameter');
    expect(error.valid_values).toEqual(['cxo', 'vp', 'director', 'manager', 'staff']);
    expect(error.reason).toContain('cxo, vp, director, manager, staff');
  });

  it('400 for a missing or malformed domain, a bad limit, a repeated or unknown parameter', async () => {
    await expect400({}, 'missing_parameter');
    await expect400({ domain: 'https://acme.com' }, 'invalid_parameter');
    await expect400({ domain: 'acme.com,,b.com' }, 'invalid_parameter');
    await expect400({ domain: 'acme.com', limit: 0 }, 'invalid_parameter');
    await expect400({ domain: 'acme.com', limit: 1001 }, 'invalid_parameter');
    await expect400({ domain: 'acme.com', technology: 'Shopify' }, 'invalid_parameter');
    const repeated = await call(sandbox.url, '/api/v1/contacts?domain=a.com&domain=b.com', { key });
    expect(repeated.body.error.code).toBe('invalid_parameter');
  });
});
