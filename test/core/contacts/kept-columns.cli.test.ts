/**
 * The company on every contact (issue 36): `contacts` reading a companies export copies its company
 * columns onto each contact row, by default under --preset (Salesforce's Company) and by name with
 * --keep-columns, from CSV, NDJSON, JSON and xlsx alike; `pipeline` gives the same columns for the same leads.
 * The companies' names and industries, and each domain's contacts, are the independent client's.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess, runShell, scratchDir } from '../../helpers/cli.js';
import { csvRecords } from '../../helpers/csv.js';
import { call, contactsOfDomain, qs } from '../../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
const SET = ['-t', 'Shopify', '--country', 'US'];
let sandbox: RunningSandbox;
let companiesCsv: string;
/** The same 5 companies as the independent client reads them. */
let companies: Array<{ domain: string; company_name: string; industry: string }>;
beforeAll(async () => {
  sandbox = await startTestSandbox();
  // The input, made in process: not under test here.
  const listed = await runInProcess(['companies', ...SET, '--max', '5', '--format', 'csv'], {
    url: sandbox.url,
    apiKey: KEY,
  });
  expect(listed.code).toBe(0);
  companiesCsv = listed.stdout;
  const page = await call(
    sandbox.url,
    `/api/v1/companies?${qs({ technology: 'Shopify', country: 'united states', limit: 5 })}`,
    {
      key: KEY,
    },
  );
  companies = page.body.data;
});
afterAll(async () => {
  await sandbox?.close();
});

const inProcess = (args: string[], input?: string) => runInProcess(args, { url: sandbox.url, apiKey: KEY, input });

describe('contacts of a companies export', () => {
  it('`companies … --format csv | contacts --preset salesforce`: every row has its Company', async () => {
    const run = await runShell(
      `eval "$PROSPECT companies ${SET.join(' ')} --max 5 --format csv" | eval "$PROSPECT contacts --preset salesforce"`,
      { url: sandbox.url, apiKey: KEY },
    );
    expect(run.code, run.stderr).toBe(0);
    const rows = csvRecords(run.stdout);
    expect(rows.length).toBeGreaterThan(0);
    const names = new Map(companies.map((company) => [company.domain, company.company_name]));
    expect(new Set(rows.map((row) => row['Website']))).toEqual(new Set(names.keys()));
    for (const row of rows) {
      expect(row['Company']).not.toBe('');
      expect(row['Company']).toBe(names.get(row['Website']!));
    }
    expect(Object.keys(rows[0]!)).toEqual([
      'First Name',
      'Last Name',
      'Email',
      'Title',
      'Company',
      'Website',
      'Industry',
      'Country',
    ]);
  });

  it("--keep-columns industry adds the company's industry after the contact columns (in process)", async () => {
    const kept = await inProcess(['contacts', '--format', 'csv', '--keep-columns', 'industry'], companiesCsv);
    expect(kept.code, kept.stderr).toBe(0);
    const rows = csvRecords(kept.stdout);
    expect(Object.keys(rows[0]!).at(-1)).toBe('industry');
    // Every contact of the 5 domains, in input order, each with its company's industry.
    const expected = [];
    for (const company of companies)
      for (const contact of await contactsOfDomain(sandbox.url, KEY, company.domain))
        expected.push(`${company.domain} ${contact.full_name} ${contact.business_email ?? ''} ${company.industry}`);
    expect(rows.map((row) => `${row.domain} ${row.full_name} ${row.business_email} ${row.industry}`)).toEqual(expected);
  });

  it('a column the input does not have is exit 2, naming the columns it has (in process)', async () => {
    const run = await inProcess(['contacts', '--keep-columns', 'revenue'], companiesCsv);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /--keep-columns "revenue": the input has no such column\.\nIts columns are: domain, company_name/,
    );
  });

  it("NDJSON, JSON and prospect's own xlsx give the same rows as CSV (in process)", async () => {
    const dir = await scratchDir();
    const args = ['contacts', '--format', 'csv', '--keep-columns', 'company_name,industry,country,employee_range'];
    const expected = (await inProcess(args, companiesCsv)).stdout;
    for (const format of ['ndjson', 'json']) {
      const input = await inProcess(['companies', ...SET, '--max', '5', '--format', format]);
      const run = await inProcess(args, input.stdout);
      expect(run.stdout, format).toBe(expected);
    }
    const workbook = join(dir, 'companies.xlsx');
    expect((await inProcess(['companies', ...SET, '--max', '5', '-o', workbook])).code).toBe(0);
    const fromXlsx = await inProcess([...args, '--domains-file', workbook]);
    expect(fromXlsx.code, fromXlsx.stderr).toBe(0);
    expect(fromXlsx.stdout).toBe(expected);
  });

  it('pipeline and contacts give the same columns and rows for the same leads (in process)', async () => {
    const dir = await scratchDir();
    const flags = ['-s', 'cxo', '--preset', 'salesforce', '--format', 'csv'];
    const pipeline = await inProcess(['pipeline', ...SET, '--max', '5', ...flags, '--summary', join(dir, 's.json')]);
    const contacts = await inProcess(['contacts', ...flags], companiesCsv);
    expect(pipeline.code, pipeline.stderr).toBe(0);
    expect(contacts.stdout).toBe(pipeline.stdout);
    expect(JSON.parse(await readFile(join(dir, 's.json'), 'utf8')).rows).toBeGreaterThan(0);
  });
});
