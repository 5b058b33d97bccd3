/**
 * Issue 16, through the spawned binary against one small sandbox: exclusion lists keep companies and
 * addresses out of the output and away from the service (its own counters say so), --keep-empty shows
 * the companies without a contact, pipeline --max caps companies, a standing list from `prospect config`
 * applies to every run, and every row-writing command writes a run record with the same fields.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir } from '../helpers/cli.js';
import { csvRecords } from '../helpers/csv.js';
import { allCompanies, contactsOfDomain, sandboxStats } from '../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
const SET = ['-t', 'Shopify', '--country', 'US'];

let sandbox: RunningSandbox;
let work: string;
/** The set's domains in the service's order, as the service lists them (not through prospect). */
let listed: string[];
let excludedDomains: string[];
let excludedEmail: string;

const runOptions = (env: Record<string, string>) => ({
  url: sandbox.url,
  apiKey: KEY,
  cwd: work,
  env: { PROSPECT_CACHE_DIR: join(work, 'cache'), PROSPECT_CONFIG_DIR: join(work, 'config'), ...env },
});
/** The binary, in the shared work directory: one run of each promise below. */
const prospect = (args: string[], env: Record<string, string> = {}) => runCli(args, runOptions(env));
/** The same main() in process, in the same directory: estimates, follow-up runs and set-up steps. */
const inProcess = (args: string[], env: Record<string, string> = {}) => runInProcess(args, runOptions(env));
const distinct = (values: string[]) => [...new Set(values)];

beforeAll(async () => {
  sandbox = await startTestSandbox({ companies: 3_000, recordTraffic: true });
  work = await scratchDir();
  listed = (await allCompanies(sandbox.url, KEY, { technology: 'Shopify', country: 'united states' })).map(
    (row) => row.domain as string,
  );
  expect(listed.length).toBeGreaterThan(10);
  // Spread over the listing, so the cut is not just its head.
  excludedDomains = [listed[1]!, listed[4]!, listed[7]!];
  // A CRM export as it comes: BOM, CRLF, a Website column in capitals, URLs and mixed case.
  const [a, b, c] = excludedDomains.map((domain) => domain.toUpperCase());
  await writeFile(
    join(work, 'customers.csv'),
    `\uFEFFAccount Name,WEBSITE,Owner\r\nFirst,https://www.${a}/about,ann\r\nSecond,${b},bob\r\nThird,"http://${c}",cy\r\n`,
  );
  // An address the run would verify (stale: every address is older than the sandbox's snapshot), asked of a
  // domain that is not excluded, so asking leaves no excluded domain in the sandbox's counters.
  const withEmail = [];
  for (const domain of listed.filter((d) => !excludedDomains.includes(d))) {
    withEmail.push(
      ...(await contactsOfDomain(sandbox.url, KEY, domain, 'cxo')).filter(
        (contact) => contact.business_email && contact.business_email_last_seen,
      ),
    );
    if (withEmail.length > 0) break;
  }
  excludedEmail = withEmail[0].business_email;
  await writeFile(
    join(work, 'do-not-contact.json'),
    JSON.stringify([{ name: 'someone', Email: excludedEmail.toUpperCase() }]),
  );
});
afterAll(async () => {
  await sandbox?.close();
});

describe('pipeline with exclusion lists and --keep-empty', () => {
  it('leaves the listed companies and addresses out of the output, the contacts calls and the paid checks', async () => {
    const run = await prospect([
      'pipeline',
      ...SET,
      '--seniority',
      'cxo',
      '--exclude-domains',
      'customers.csv',
      '--exclude-emails',
      'do-not-contact.json',
      '--keep-empty',
      '--stale',
      'verify',
      '--yes',
      '-o',
      'leads.csv',
      '--summary',
      'run.json',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const rows = csvRecords(await readFile(join(work, 'leads.csv'), 'utf8'));
    // --keep-empty: every company of the set but the excluded ones, in the service's order.
    expect(distinct(rows.map((row) => row.domain!))).toEqual(
      listed.filter((domain) => !excludedDomains.includes(domain)),
    );
    expect(rows.map((row) => row.business_email?.toLowerCase())).not.toContain(excludedEmail.toLowerCase());
    const empty = rows.filter((row) => row.full_name === '' && row.business_email === '' && row.title === '');
    expect(empty.length).toBeGreaterThan(0);
    for (const row of empty) expect(row.email_freshness).toBe('none');

    const stats = await sandboxStats(sandbox.url);
    expect(stats.contacts_domains.filter((domain: string) => excludedDomains.includes(domain))).toEqual([]);
    expect(stats.verified_emails).not.toContain(excludedEmail.toLowerCase());
    expect(stats.verified_emails.length).toBeGreaterThan(0);

    const summary = JSON.parse(await readFile(join(work, 'run.json'), 'utf8'));
    expect(summary.excluded.domains).toMatchObject({ entries: 3, removed: 3 });
    expect(summary.excluded.emails).toMatchObject({ entries: 1, removed: 1 });
    expect(summary.kept_empty).toBe(empty.length);
    expect(summary.rows).toBe(rows.length);
    expect(run.stderr).toContain('warning: 3 companies removed by --exclude-domains.');
    expect(run.stderr).toContain('warning: 1 contact removed by --exclude-emails.');
  });

  it('--max caps the companies that are not excluded, and says so when more match', async () => {
    const run = await inProcess([
      'pipeline',
      ...SET,
      '--seniority',
      'cxo',
      '--max',
      '4',
      '--keep-empty',
      '--exclude-domains',
      'customers.csv',
      '--format',
      'csv',
      '--columns',
      'domain',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(distinct(csvRecords(run.stdout).map((row) => row.domain!))).toEqual(
      listed.filter((domain) => !excludedDomains.includes(domain)).slice(0, 4),
    );
    // A deliberate --max is not a warning (issue 36): the run record says it stopped there.
    expect(run.stderr).not.toContain('Stopped at --max');
    // The dry run samples as the run would: the lists leave their companies out, --max caps the rest.
    const dry = await inProcess([
      'pipeline',
      ...SET,
      '--max',
      '4',
      '--exclude-domains',
      'customers.csv',
      '--dry-run',
      '--format',
      'json',
    ]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ companies: listed.length, excludedCompanies: 3, maxCompanies: 4 });
    expect(
      (await sandboxStats(sandbox.url)).contacts_domains.filter((domain: string) => excludedDomains.includes(domain)),
    ).toEqual([]);
  });
});

describe('contacts and count with --exclude-domains', () => {
  it('contacts never asks for an excluded domain given as input; count leaves them out of its walk', async () => {
    const run = await prospect([
      'contacts',
      ...listed.slice(0, 6),
      '--exclude-domains',
      'customers.csv',
      '--keep-empty',
      '--format',
      'csv',
      '--columns',
      'domain',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(distinct(csvRecords(run.stdout).map((row) => row.domain!))).toEqual(
      listed.slice(0, 6).filter((domain) => !excludedDomains.includes(domain)),
    );
    expect(run.stderr).toContain('warning: 2 companies removed by --exclude-domains.');
    const count = await inProcess(['count', ...SET, '--exclude-domains', 'customers.csv', '--format', 'json']);
    expect(count.code, count.stderr).toBe(0);
    expect(JSON.parse(count.stdout).data).toEqual([{ companies: listed.length - 3, contacts: null }]);
    expect(
      (await sandboxStats(sandbox.url)).contacts_domains.filter((domain: string) => excludedDomains.includes(domain)),
    ).toEqual([]);
  });
});

describe('verify --exclude-emails', () => {
  it('an excluded address is not written, not counted in the estimate and never paid for', async () => {
    const others = ['ada@example.com', 'bob@example.org'];
    await writeFile(join(work, 'people.csv'), `business_email\n${excludedEmail}\n${others.join('\n')}\n`);
    const estimate = await inProcess([
      'verify',
      '--file',
      'people.csv',
      '--exclude-emails',
      'do-not-contact.json',
      '--no-cache',
      '--dry-run',
    ]);
    expect(estimate.stdout).toMatch(/^would spend 2 units: 2 unique valid addresses/);
    const before = (await sandboxStats(sandbox.url)).units.growth;
    const run = await prospect([
      'verify',
      '--file',
      'people.csv',
      '--exclude-emails',
      'do-not-contact.json',
      '--no-cache',
      '--yes',
      '-o',
      'verified.csv',
      '--summary',
      'verify.json',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(csvRecords(await readFile(join(work, 'verified.csv'), 'utf8')).map((row) => row.business_email)).toEqual(
      others,
    );
    const stats = await sandboxStats(sandbox.url);
    expect(stats.units.growth - before).toBe(2);
    expect(stats.verified_emails).not.toContain(excludedEmail.toLowerCase());
    expect(run.stderr).toContain('warning: 1 address removed by --exclude-emails.');
  });
});

describe('the run record', () => {
  it('--summary and FILE.meta.json have the same fields on companies, contacts, verify and pipeline, as documented', async () => {
    // Every run leaves the excluded companies out, so no test here ever sends one to the service.
    const runs = [
      [
        'companies',
        ...SET,
        '--max',
        '3',
        '--exclude-domains',
        'customers.csv',
        '-o',
        'r-companies.csv',
        '--summary',
        'r-companies.json',
      ],
      ['contacts', listed[0]!, '-o', 'r-contacts.csv', '--summary', 'r-contacts.json'],
      ['verify', 'ada@example.com', '--yes', '-o', 'r-verify.csv', '--summary', 'r-verify.json'],
      [
        'pipeline',
        ...SET,
        '--max',
        '2',
        '--exclude-domains',
        'customers.csv',
        '-o',
        'r-pipeline.csv',
        '--summary',
        'r-pipeline.json',
      ],
      ['companies', ...SET, '--max', '3', '--exclude-domains', 'customers.csv', '-o', 'r-companies.xlsx'],
    ];
    // In process: the fields of the records are main()'s; the binary writes them in the tests above.
    for (const args of runs) expect((await inProcess(args)).code).toBe(0);
    const read = async (name: string) =>
      JSON.parse(await readFile(join(work, name), 'utf8')) as Record<string, unknown>;
    const names = ['companies', 'contacts', 'verify', 'pipeline'];
    const metas = await Promise.all(names.map((name) => read(`r-${name}.csv.meta.json`)));
    const summaries = await Promise.all(names.map((name) => read(`r-${name}.json`)));
    const fields = Object.keys(metas[0]!);
    for (const record of metas) expect(Object.keys(record)).toEqual(fields);
    const runFields = ['finished_at', 'duration_ms', 'exit_code', 'complete'];
    for (const record of summaries) expect(Object.keys(record)).toEqual([...fields, ...runFields]);
    expect(metas.map((record) => record['command'])).toEqual(['companies', 'contacts', 'verify', 'pipeline']);
    // The workbook's "About this list" shows the same record, one field (or sub-field) a row.
    const workbook = await new ExcelJS.Workbook().xlsx.readFile(join(work, 'r-companies.xlsx'));
    const about = workbook
      .getWorksheet('About this list')!
      .getSheetValues()
      .slice(2)
      .map((values) => String((values as unknown[])[1]));
    expect(distinct(about.map((name) => name.split('.')[0]!)).sort()).toEqual([...fields].sort());
    // docs/run-record.md documents every field, once.
    const documented = [
      ...(await readFile(join(import.meta.dirname, '../../docs/run-record.md'), 'utf8')).matchAll(
        /^\| `([a-z_]+)` \|/gm,
      ),
    ].map((match) => match[1]);
    // last_success: only in the summary of a failed run that replaced a successful one (issue 43).
    expect(documented).toEqual([...fields, ...runFields, 'last_success']);
  });
});

describe('a standing list from prospect config', () => {
  it('applies to every run; once its file is gone, a run stops with exit 2 before any call', async () => {
    // A config of its own: the other tests here run without a standing list, in any order.
    const own = { PROSPECT_CONFIG_DIR: await scratchDir() };
    await writeFile(join(work, 'standing.txt'), `# customers\n${excludedDomains[0]}\n`);
    expect((await inProcess(['config', 'set', 'exclude-domains', 'standing.txt'], own)).code).toBe(0);
    const run = await prospect(['companies', ...SET, '--format', 'csv', '--columns', 'domain'], own);
    expect(run.code, run.stderr).toBe(0);
    expect(csvRecords(run.stdout).map((row) => row.domain)).toEqual(
      listed.filter((domain) => domain !== excludedDomains[0]),
    );
    expect(run.stderr).toContain('warning: 1 company removed by --exclude-domains.');

    await rm(join(work, 'standing.txt'));
    const before = (await sandboxStats(sandbox.url)).requests.total;
    const stopped = await inProcess(['pipeline', ...SET], own);
    expect(stopped.code).toBe(2);
    expect(stopped.stderr).toMatch(
      /^prospect: the standing exclude-domains list .*standing\.txt \(prospect config\) does not exist; nothing was sent\./,
    );
    expect((await sandboxStats(sandbox.url)).requests.total).toBe(before);
    expect((await inProcess(['config', 'set', 'exclude-domains', 'missing.csv'], own)).code).toBe(2);
  });
});
