/**
 * runCompanies through its seam (src/runtime/job-deps.ts): in process, its client over a route stub
 * that fails the test on an unmatched request or an unused route. No socket, no server, no worker:
 * each case takes milliseconds. The file is read back with csv-parse, not prospect's reader.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCompanies, type CompaniesFlags } from '../../../src/core/companies/job.js';
import { COMPANIES_FLAGS } from '../../../src/options/command-flags.js';
import { csvRecords } from '../../helpers/csv.js';
import { flagsFrom, jobContext } from '../../helpers/job-context.js';
import { routeStub } from '../../helpers/route-stub.js';
import { scratchDir } from '../../helpers/scratch.js';

const COMPANIES = '/api/v1/companies';

function company(domain: string, rank: number) {
  return {
    domain,
    company_name: domain.split('.')[0]!.toUpperCase(),
    employee_range: '11-50',
    industry: 'retail',
    country: 'united states',
    crux_rank: rank,
    tech_count: 2,
    technologies: [
      { t: 'Shopify', c: 'ecommerce' },
      { t: 'Klaviyo', c: 'email' },
    ],
  };
}

function page(domains: string[], next: string | null, total = 3) {
  return {
    data: domains.map((domain, index) => company(domain, 1000 + index)),
    meta: { total, field_fill_rates: {} },
    next_cursor: next,
  };
}

async function run(words: string[], stub: ReturnType<typeof routeStub>) {
  const job = jobContext();
  const output = join(await scratchDir('prospect-companies-job-'), 'out.csv');
  const flags = flagsFrom(COMPANIES_FLAGS, ['-t', 'Shopify', '-o', output, ...words]) as CompaniesFlags;
  const code = await job.exitCodeOf(runCompanies(job.ctx, flags, job.depsOver(stub)));
  return { code, output, stderr: job.stderr() };
}

describe('runCompanies over a route stub', () => {
  it('follows the cursor to the last page and writes every row once', async () => {
    const stub = routeStub();
    stub.route('GET', COMPANIES, { technology: 'Shopify' }, { body: page(['a.com', 'b.com'], 'c2') });
    stub.route('GET', COMPANIES, { technology: 'Shopify', cursor: 'c2' }, { body: page(['c.com'], null) });
    const { code, output, stderr } = await run([], stub);
    expect(code, stderr).toBe(0);
    const rows = csvRecords(readFileSync(output, 'utf8'));
    expect(rows.map((row) => row.domain)).toEqual(['a.com', 'b.com', 'c.com']);
    expect(stub.requests).toHaveLength(2);
  });

  it('--max 2 stops at two rows and asks for no page it does not write', async () => {
    const stub = routeStub();
    // One route only: a request for the second page would be unmatched and fail the test.
    stub.route('GET', COMPANIES, { technology: 'Shopify' }, { body: page(['a.com', 'b.com'], 'c2') });
    const { code, output, stderr } = await run(['--max', '2'], stub);
    expect(code, stderr).toBe(0);
    const rows = csvRecords(readFileSync(output, 'utf8'));
    expect(rows.map((row) => row.domain)).toEqual(['a.com', 'b.com']);
  });

  it('a 422 no_match is exit 3, nothing matched, and no file is written', async () => {
    const stub = routeStub();
    const refusal = { error: { code: 'no_match', message: 'no company matches these filters' } };
    stub.route('GET', COMPANIES, { technology: 'Shopify' }, { status: 422, body: refusal });
    const { code, output, stderr } = await run([], stub);
    expect(code, stderr).toBe(3);
    expect(() => readFileSync(output)).toThrow(/ENOENT/);
  });

  it('a 401 is exit 4 after one request', async () => {
    const stub = routeStub();
    const refusal = { error: { code: 'invalid_api_key', message: 'unknown key' } };
    stub.route('GET', COMPANIES, { technology: 'Shopify' }, { status: 401, body: refusal });
    const { code, stderr } = await run([], stub);
    expect(code, stderr).toBe(4);
    expect(stub.requests).toHaveLength(1);
  });
});
