/**
 * Issue 46, aim: --industry and --max-rank on companies, count and pipeline, run in process against
 * an in-process sandbox that records its traffic. Expected rows come from the independent client's
 * walk of the whole listing, filtered here; the sandbox's own counters show which companies were
 * asked for contacts and which addresses were paid for.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess, scratchDir } from '../../helpers/cli.js';
import { csvRecords } from '../../helpers/csv.js';
import { allCompanies, contactsOfDomain, sandboxStats } from '../../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, TEST_COMPANIES, type RunningSandbox } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
const INDUSTRY = 'apparel and fashion';
const COMPANIES = 6_000;

let work: string;
const sandboxes: RunningSandbox[] = [];

/** A sandbox of its own, so its traffic counters hold one run's calls only. */
async function freshSandbox(companies = COMPANIES): Promise<{ sandbox: RunningSandbox; shopify: any[] }> {
  const sandbox = await startTestSandbox({ companies, recordTraffic: true });
  sandboxes.push(sandbox);
  return { sandbox, shopify: await allCompanies(sandbox.url, KEY, { technology: 'Shopify' }) };
}

const run = (sandbox: RunningSandbox, args: string[]) =>
  runInProcess(args, {
    url: sandbox.url,
    apiKey: KEY,
    cwd: work,
    env: { PROSPECT_CACHE_DIR: join(work, 'cache'), PROSPECT_CONFIG_DIR: join(work, 'config') },
  });

beforeAll(async () => {
  work = await scratchDir();
});
afterAll(async () => {
  await Promise.all(sandboxes.map((sandbox) => sandbox.close()));
});

describe('companies --industry / --max-rank', () => {
  it('lists exactly the companies of the industries (any case), as the service orders them', async () => {
    const { sandbox, shopify } = await freshSandbox();
    const expected = shopify.filter((row) => row.industry === INDUSTRY || row.industry === 'retail');
    expect(expected.length).toBeGreaterThan(5);
    expect(expected.length).toBeLessThan(shopify.length);
    const result = await run(sandbox, [
      'companies',
      '-t',
      'Shopify',
      '--industry',
      'Apparel and Fashion',
      '--industry',
      'RETAIL',
      '--format',
      'csv',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const rows = csvRecords(result.stdout);
    expect(rows.map((row) => row.domain)).toEqual(expected.map((row) => row.domain));
    for (const row of rows) expect([INDUSTRY, 'retail']).toContain(row.industry);
  });

  it('--max-rank 10000: every crux_rank is at most 10,000, and none is missing', async () => {
    const { sandbox, shopify } = await freshSandbox();
    const expected = shopify.filter((row) => row.crux_rank <= 10_000);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(shopify.length);
    const result = await run(sandbox, ['companies', '-t', 'Shopify', '--max-rank', '10000', '--format', 'json']);
    expect(result.code, result.stderr).toBe(0);
    const document = JSON.parse(result.stdout);
    expect(document.data.map((row: any) => row.domain)).toEqual(expected.map((row) => row.domain));
    for (const row of document.data) expect(row.crux_rank).toBeLessThanOrEqual(10_000);
    // The service counted the wider set; the document says so instead of calling it the set's total.
    expect(document.meta.total).toBeUndefined();
    expect(document.meta.service_count.applied_locally).toEqual(['crux_rank ≤ 10,000']);
  });

  it.each([
    [['companies', '-t', 'Shopify', '--industry', 'aparel and fashon']],
    [['count', '-t', 'Shopify', '--industry', 'aparel and fashon']],
    [['pipeline', '-t', 'Shopify', '--industry', 'aparel and fashon', '--stale', 'verify', '--verify-budget', '5']],
  ])('a misspelt industry is exit 2 with suggestions, before any request: %s', async (args) => {
    const { sandbox } = await freshSandbox();
    const before = (await sandboxStats(sandbox.url)).requests.total;
    const result = await run(sandbox, args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown --industry "aparel and fashon"');
    expect(result.stderr).toContain('Did you mean "apparel and fashion"?');
    expect((await sandboxStats(sandbox.url)).requests.total).toBe(before);
  });

  it.each([['0'], ['1000001'], ['1.5'], ['ten']])('--max-rank %s is exit 2 before any request', async (value) => {
    const { sandbox } = await freshSandbox();
    const before = (await sandboxStats(sandbox.url)).requests.total;
    const result = await run(sandbox, ['companies', '-t', 'Shopify', '--max-rank', value]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--max-rank takes a whole number from 1 to 1000000');
    expect((await sandboxStats(sandbox.url)).requests.total).toBe(before);
  });
});

describe('count --industry / --max-rank', () => {
  it('walks the set and counts the filtered set, saying so', async () => {
    const { sandbox, shopify } = await freshSandbox();
    const expected = shopify.filter((row) => row.industry === INDUSTRY && row.crux_rank <= 100_000);
    const result = await run(sandbox, [
      'count',
      '-t',
      'Shopify',
      '--industry',
      INDUSTRY,
      '--max-rank',
      '100000',
      '--format',
      'json',
      '-v',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const document = JSON.parse(result.stdout);
    expect(document.data).toEqual([{ companies: expected.length, contacts: null }]);
    expect(document.meta.counted_by).toBe('walk');
    expect(result.stderr).toContain(`applied locally: the counts are of the filtered set`);
  });

  it('--by country counts the filtered set by country', async () => {
    const { sandbox, shopify } = await freshSandbox();
    const expected = new Map<string, number>();
    for (const row of shopify.filter((company) => company.industry === INDUSTRY))
      expected.set(row.country, (expected.get(row.country) ?? 0) + 1);
    const result = await run(sandbox, [
      'count',
      '-t',
      'Shopify',
      '--industry',
      INDUSTRY,
      '--by',
      'country',
      '--top',
      '0',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const rows = csvRecords(result.stdout);
    expect(new Map(rows.map((row) => [row.country!, Number(row.companies)]))).toEqual(expected);
  });
});

describe('pipeline --industry / --max-rank', () => {
  it('asks contacts for, and pays for addresses of, the companies of the industry only, and counts the rest', async () => {
    const { sandbox, shopify } = await freshSandbox();
    const inIndustry = shopify.filter((row) => row.industry === INDUSTRY).map((row) => row.domain as string);
    const result = await run(sandbox, [
      'pipeline',
      '-t',
      'Shopify',
      '--industry',
      INDUSTRY,
      '--stale',
      'verify',
      '--verify-budget',
      '50',
      '-o',
      'apparel.csv',
      '--summary',
      'apparel.json',
      '-v',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const rows = csvRecords(await readFile(join(work, 'apparel.csv'), 'utf8'));
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.industry).toBe(INDUSTRY);

    const stats = await sandboxStats(sandbox.url);
    expect(stats.contacts_domains.length).toBeGreaterThan(0);
    expect(stats.contacts_domains.filter((domain: string) => !inIndustry.includes(domain))).toEqual([]);
    // Every unit went to an address of a company in the industry.
    const addresses = new Set<string>();
    for (const domain of stats.contacts_domains)
      for (const contact of await contactsOfDomain(sandbox.url, KEY, domain))
        if (contact.business_email) addresses.add(contact.business_email.toLowerCase());
    expect(stats.verified_emails.length).toBeGreaterThan(0);
    expect(stats.verified_emails.filter((email: string) => !addresses.has(email))).toEqual([]);

    const summary = JSON.parse(await readFile(join(work, 'apparel.json'), 'utf8'));
    expect(summary.filtered_locally).toEqual({
      companies: shopify.length - inIndustry.length,
      filters: [`industry ${INDUSTRY}`],
    });
    expect(summary.companies_seen).toBe(inIndustry.length);
    expect(summary.filters.industries).toEqual([INDUSTRY]);
    expect(result.stderr).toContain('before any contacts call');
  });

  it('--max-rank 10000: every row under the rank, no contacts call to another company', async () => {
    // The full test dataset: a smaller one has hardly a company of so high a rank.
    const { sandbox, shopify } = await freshSandbox(TEST_COMPANIES);
    const ranked = shopify.filter((row) => row.crux_rank <= 10_000).map((row) => row.domain as string);
    const result = await run(sandbox, ['pipeline', '-t', 'Shopify', '--max-rank', '10000', '--format', 'csv']);
    expect(result.code, result.stderr).toBe(0);
    const rows = csvRecords(result.stdout);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(Number(row.crux_rank)).toBeLessThanOrEqual(10_000);
    const stats = await sandboxStats(sandbox.url);
    expect([...stats.contacts_domains].sort()).toEqual([...ranked].sort());
  });
});
