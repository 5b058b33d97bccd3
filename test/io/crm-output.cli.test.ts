/**
 * Lists for a CRM or for Excel (issue 16, points 2 and 3), against one small sandbox, the first run
 * of each promise through the spawned binary and the others in process: --preset headers exactly as
 * docs/crm-import.md documents them, a preset changed column by column, and `-o FILE.xlsx` opened by
 * LibreOffice, which must give back the values of a `--no-escape-formulas` CSV of the same rows,
 * formula-looking text as text.
 */
import { execFile } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir } from '../helpers/cli.js';
import { csvRecords, csvRows } from '../helpers/csv.js';
import { findProgram } from '../helpers/programs.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../helpers/sandbox.js';
import { sandboxStats } from '../helpers/independent-client.js';

const KEY = SANDBOX_KEYS.growth;
const LIBREOFFICE = findProgram('soffice');
const LEADS = ['pipeline', '-t', 'Shopify', '--seniority', 'cxo,vp'];

let sandbox: RunningSandbox;
let plainLeads: Record<string, string>[];
beforeAll(async () => {
  sandbox = await startTestSandbox({ companies: 2_000 });
  // The plain leads the presets are compared with: a reference, run in process.
  const plain = await runInProcess([...LEADS, '--format', 'csv'], { url: sandbox.url, apiKey: KEY });
  expect(plain.code).toBe(0);
  plainLeads = csvRecords(plain.stdout);
  expect(plainLeads.length).toBeGreaterThan(5);
});
afterAll(async () => {
  await sandbox?.close();
});

function prospect(args: string[], extra: Parameters<typeof runCli>[1] = {}) {
  return runCli(args, { url: sandbox.url, apiKey: KEY, ...extra });
}
/** The same main() in process: the other presets and refusals, once one of each is spawned. */
function inProcess(args: string[], extra: Parameters<typeof runInProcess>[1] = {}) {
  return runInProcess(args, { url: sandbox.url, apiKey: KEY, ...extra });
}

const headerLine = (csv: string) => csv.slice(0, csv.indexOf('\n'));

describe('--preset (against the sandbox)', () => {
  it('pipeline --preset hubspot: the documented HubSpot headers, each over the value it names', async () => {
    const run = await prospect([...LEADS, '--preset', 'hubspot', '--format', 'csv']);
    expect(run.code).toBe(0);
    expect(headerLine(run.stdout)).toBe(
      'First Name,Last Name,Email,Job Title,Company Name,Website URL,Industry,Country/Region',
    );
    expect(csvRecords(run.stdout)).toEqual(
      plainLeads.map((lead) => ({
        'First Name': lead.first_name,
        'Last Name': lead.last_name,
        Email: lead.business_email,
        'Job Title': lead.title,
        'Company Name': lead.company_name,
        'Website URL': lead.domain,
        Industry: lead.industry,
        'Country/Region': lead.country,
      })),
    );
  });

  it('pipeline --preset salesforce: the documented Salesforce lead headers, each over the value it names', async () => {
    const run = await inProcess([...LEADS, '--preset', 'salesforce', '--format', 'csv']);
    expect(run.code).toBe(0);
    expect(headerLine(run.stdout)).toBe('First Name,Last Name,Email,Title,Company,Website,Industry,Country');
    expect(csvRecords(run.stdout).map((row) => [row.Email, row.Company, row.Website, row['Last Name']])).toEqual(
      plainLeads.map((lead) => [lead.business_email, lead.company_name, lead.domain, lead.last_name]),
    );
  });

  it('contacts has no company fields: hubspot keeps the contact columns, salesforce is refused before any call (issue 43)', async () => {
    const domains = [...new Set(plainLeads.map((lead) => lead.domain!))].slice(0, 3);
    const hubspot = await inProcess(['contacts', ...domains, '--preset', 'hubspot', '--format', 'csv']);
    expect(hubspot.code).toBe(0);
    expect(headerLine(hubspot.stdout)).toBe('First Name,Last Name,Email,Job Title,Website URL');
    // Rows HubSpot cannot match by email are counted in one warning, from the rows themselves.
    const rows = csvRecords(hubspot.stdout);
    expect(rows.length).toBeGreaterThan(0);
    const noEmail = rows.filter((row) => row.Email === '').length;
    expect(noEmail).toBeGreaterThan(0);
    expect(hubspot.stderr).toContain(`${noEmail} rows with no Email (--preset hubspot)`);

    // Salesforce refuses a lead without a Company, and a plain list of domains has none: exit 2, no call.
    const before = (await sandboxStats(sandbox.url)).requests.total as number;
    const salesforce = await inProcess(['contacts', ...domains, '--preset', 'salesforce', '--format', 'csv']);
    expect(salesforce.code).toBe(2);
    expect(salesforce.stdout).toBe('');
    expect(salesforce.stderr).toMatch(/--preset salesforce needs a Company column/);
    expect(salesforce.stderr).toContain('--columns "domain:Company"');
    expect((await sandboxStats(sandbox.url)).requests.total).toBe(before);
    // As the hint says: the domain as the Company.
    const named = await inProcess([
      ...['contacts', ...domains, '--preset', 'salesforce', '--columns', 'domain:Company', '--format', 'csv'],
    ]);
    expect(named.code, named.stderr).toBe(0);
    expect(headerLine(named.stdout)).toBe('First Name,Last Name,Email,Title,Company');
  });

  it('--columns changes a preset column by column: rename, leave out, add', async () => {
    const run = await inProcess([
      ...LEADS,
      '--preset',
      'hubspot',
      '--columns',
      'domain:Company Domain Name,company_name:,email_freshness',
      '--format',
      'csv',
    ]);
    expect(run.code).toBe(0);
    expect(headerLine(run.stdout)).toBe(
      'First Name,Last Name,Email,Job Title,Company Domain Name,Industry,Country/Region,email_freshness',
    );
  });
});

/** Every sheet of each workbook as CSV (UTF-8, raw values, one file a sheet), by LibreOffice headless. */
async function libreOfficeSheets(paths: string[], dir: string): Promise<Map<string, string[][]>> {
  const out = join(dir, 'libreoffice');
  // Filter options: comma, double quote, UTF-8, from line 1, ..., values not as shown, no formulas, every sheet (-1).
  const filter = 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1';
  await promisify(execFile)(
    LIBREOFFICE.command,
    [`-env:UserInstallation=file://${dir}/lo-profile`, '--headless', '--convert-to', filter, '--outdir', out, ...paths],
    { timeout: 120_000 },
  );
  const sheets = new Map<string, string[][]>();
  for (const name of await readdir(out)) sheets.set(name, csvRows(await readFile(join(out, name), 'utf8')));
  return sheets;
}

describe.skipIf(LIBREOFFICE.skip)('-o FILE.xlsx, opened by LibreOffice', () => {
  /** Cells that a spreadsheet would run as formulas, were they not typed text. */
  const HOSTILE = ['=1+1', '+1 415 555 0100', '-2+3', '@SUM(1,1)', '=HYPERLINK("http://example.com","x")'];
  let dir: string;
  let sheets: Map<string, string[][]>;
  let leadsCsv: string[][];
  let verifyCsv: string[][];

  beforeAll(async () => {
    dir = await scratchDir();
    // verify passes the input's columns through: a CSV whose `note` column holds the hostile cells.
    const input = join(dir, 'people.csv');
    const lines = HOSTILE.map(
      (note, index) => `person${index}@example-${index}.com,"${note.replace(/"/g, '""')}",${index * 1000 + 0.5}`,
    );
    await writeFile(input, ['business_email,note,score', ...lines].join('\n'));
    const env = { PROSPECT_CACHE_DIR: join(dir, 'cache') }; // one cache: the second run reuses the first's results
    // The leads workbook is spawned; the verify workbook and the CSVs they are compared with run in process.
    const runs = [
      await prospect([...LEADS, '-o', join(dir, 'leads.xlsx')], { cwd: dir }),
      await runInProcess([...LEADS, '--no-escape-formulas', '-o', join(dir, 'leads.csv')], {
        url: sandbox.url,
        apiKey: KEY,
      }),
      await inProcess(['verify', '--yes', '--file', input, '-o', join(dir, 'verified.xlsx')], { cwd: dir, env }),
      await runInProcess(
        ['verify', '--yes', '--file', input, '--no-escape-formulas', '-o', join(dir, 'verified.csv')],
        { url: sandbox.url, apiKey: KEY, env },
      ),
    ];
    expect(runs.map((run) => [run.code, run.stderr])).toEqual(runs.map(() => [0, '']));
    leadsCsv = csvRows(await readFile(join(dir, 'leads.csv'), 'utf8'));
    verifyCsv = csvRows(await readFile(join(dir, 'verified.csv'), 'utf8'));
    sheets = await libreOfficeSheets([join(dir, 'leads.xlsx'), join(dir, 'verified.xlsx')], dir);
  }, 180_000);

  it('gives back the same values as a --no-escape-formulas CSV of the same rows', () => {
    expect(sheets.get('leads-List.csv')).toEqual(leadsCsv);
    expect(sheets.get('verified-List.csv')).toEqual(verifyCsv);
  });

  it('gives back = + - @ cells as the text they hold, never a formula result', () => {
    const notes = sheets
      .get('verified-List.csv')!
      .slice(1)
      .map((row) => row[1]);
    expect(notes).toEqual(HOSTILE);
  });

  it('has the provenance on a second sheet, "About this list"', () => {
    const about = sheets.get('leads-About this list.csv')!;
    expect(about[0]).toEqual(['field', 'value']);
    expect(about).toContainEqual(['rows', String(leadsCsv.length - 1)]);
    expect(about.some(([field]) => field!.startsWith('source.'))).toBe(true);
  });
});

describe('-o FILE.xlsx refusals', () => {
  it('a value Excel would cut stops the run with exit 2, says to use CSV, and leaves no file (as the row limit does)', async () => {
    const dir = await scratchDir();
    const input = join(dir, 'people.csv');
    await writeFile(input, `business_email,note\nada@example.com,short\nbob@example.com,${'y'.repeat(40_000)}\n`);
    // In process, as the refusal below: the workbook above is spawned.
    const run = await inProcess(['verify', '--yes', '--file', input, '-o', join(dir, 'verified.xlsx')], {
      cwd: dir,
      env: { PROSPECT_CACHE_DIR: await scratchDir() },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'prospect: a cell holds 40,000 characters, more than Excel keeps in one cell (32,767); no .xlsx was written.\n' +
        'Write CSV instead (-o FILE.csv or --format csv).\n' +
        // The two addresses were paid for before the workbook was refused: said, and kept (issue 43).
        'prospect: spent 2 units before the run stopped; their results are kept in the verification ledger: ' +
        'a re-run within --cache-ttl does not pay for them again.\n',
    );
    expect(await readdir(dir)).toEqual(['people.csv']);
  });

  it('pipeline --state with an .xlsx output is exit 2 before any call, and writes nothing', async () => {
    const dir = await scratchDir();
    // In process: a refusal before any call.
    const run = await inProcess([...LEADS, '--state', join(dir, 'state'), '-o', join(dir, 'leads.xlsx')], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^prospect: --state cannot resume an \.xlsx file/);
    expect(await readdir(dir)).toEqual([]);
  });
});
