/**
 * The company on every contact (issue 36): `contacts` reading a companies export copies its company
 * columns onto each contact row, by default under --preset (Salesforce's Company) and by name with
 * --keep-columns, from CSV, NDJSON, JSON and xlsx alike; `pipeline` gives the same columns for the same leads.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess, runShell, scratchDir } from '../../helpers/cli.js';
import { csvRecords } from '../../helpers/csv.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
const SET = ['-t', 'Shopify', '--country', 'US'];
let sandbox: RunningSandbox;
let companiesCsv: string;
beforeAll(async () => {
  sandbox = await startTestSandbox();
  // The input, made in process: not under test here.
  const companies = await runInProcess(['companies', ...SET, '--max', '5', '--format', 'csv'], {
    url: sandbox.url,
    apiKey: KEY,
  });
  expect(companies.code).toBe(0);
  companiesCsv = companies.stdout;
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
    const names = new Map(csvRecords(companiesCsv).map((company) => [company.domain, company.company_name]));
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
    const plain = await inProcess(['contacts', '--format', 'csv'], companiesCsv);
    const kept = await inProcess(['contacts', '--format', 'csv', '--keep-columns', 'industry'], companiesCsv);
    expect(kept.code, kept.stderr).toBe(0);
    const industries = new Map(csvRecords(companiesCsv).map((company) => [company.domain, company.industry]));
    const rows = csvRecords(kept.stdout);
    expect(rows.map(({ industry, ...contact }) => contact)).toEqual(csvRecords(plain.stdout));
    for (const row of rows) expect(row.industry).toBe(industries.get(row.domain!));
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
