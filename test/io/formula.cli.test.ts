/**
 * The spreadsheet formula guard (README, "Spreadsheet safety"): a cell that starts with = + - @, a tab,
 * CR or LF is written with a leading '. Checked two ways:
 * - in the CSV of every command (companies, contacts, verify, pipeline; companies spawned, the others
 *   in process), read back by csv-parse and compared with literal expectations: no spreadsheet program needed;
 * - by a real spreadsheet: LibreOffice imports the CSV and we read back, from the flat ODS it writes,
 *   whether any cell became a formula (skipped with a reason where LibreOffice is missing, a failure in CI).
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir } from '../helpers/cli.js';
import { csvRecords } from '../helpers/csv.js';
import { findProgram } from '../helpers/programs.js';
import {
  companiesPage,
  errorBody,
  sampleCompany,
  SAMPLE_COMPANIES_META,
  startScriptedServer,
  type ScriptedServer,
} from '../helpers/scripted-server.js';

const LIBREOFFICE = findProgram('soffice');

/** One value per trigger the README names, and what the CSV must hold instead: written out, not computed. */
const GUARDED: ReadonlyArray<readonly [string, string]> = [
  ['=1+1', "'=1+1"],
  ['+2+3', "'+2+3"],
  ['-2+3', "'-2+3"],
  ['@SUM(1,1)', "'@SUM(1,1)"],
  ['\t=1+1', "'\t=1+1"],
  ['\r=1+1', "'\r=1+1"],
  ['\n=1+1', "'\n=1+1"],
];
const TRIGGER_FIRST = /^[=+\-@\t\r\n]/;
const hostile = (index: number) => GUARDED[index % GUARDED.length]![0];
const DOMAINS = GUARDED.map((_, index) => `hostile${index}.com`);
const GUARD_KEY = 'sk_test_formula_guard_5afe';

/** A company whose every free-text field starts with a trigger (a different one per field). */
const hostileCompany = (domain: string, index: number) =>
  sampleCompany(domain, {
    company_name: hostile(index),
    industry: hostile(index + 1),
    country: hostile(index + 2),
    phone: hostile(index + 3),
    linkedin_url: hostile(index + 4),
    technologies: [
      { t: hostile(index + 5), c: 'Analytics', v: null },
      { t: 'Shopify', c: 'Ecommerce', v: null },
    ],
    tech_count: 2,
  });

/** A contact whose every free-text field starts with a trigger. */
const hostileContact = (domain: string, index: number) => ({
  domain,
  full_name: hostile(index),
  first_name: hostile(index + 1),
  last_name: hostile(index + 2),
  title: hostile(index + 3),
  seniority: 'cxo',
  department: hostile(index + 4),
  business_email: `ada@${domain}`,
  business_email_last_seen: '2025-01-15',
  linkedin_url: hostile(index + 5),
});

const SOURCE = '-Licensed contacts (licensed, Example)';

/** What the service sent for each column that starts with a trigger, by row (its domain or e-mail). */
const companyCells = (index: number): Record<string, string> => ({
  company_name: hostile(index),
  industry: hostile(index + 1),
  country: hostile(index + 2),
  phone: hostile(index + 3),
  linkedin_url: hostile(index + 4),
  technologies: `${hostile(index + 5)};Shopify`,
});
const contactCells = (index: number): Record<string, string> => ({
  full_name: hostile(index),
  first_name: hostile(index + 1),
  last_name: hostile(index + 2),
  title: hostile(index + 3),
  department: hostile(index + 4),
  linkedin_url: hostile(index + 5),
  source: SOURCE,
});
/** verify reads its input as CSV, where a lone CR is a line break: that cell comes back with LF. */
const verifyCells = (index: number): Record<string, string> => ({
  name: hostile(index).replace('\r', '\n'),
  title: hostile(index + 1).replace('\r', '\n'),
});

let service: ScriptedServer;
let dir: string;
beforeAll(async () => {
  dir = await scratchDir();
  service = await startScriptedServer((request) => {
    if (request.path === '/api/v1/companies')
      return { body: { data: DOMAINS.map(hostileCompany), meta: SAMPLE_COMPANIES_META, next_cursor: null } };
    if (request.path === '/api/v1/contacts') {
      const domains = (request.query.get('domain') ?? '').split(',');
      return {
        body: {
          data: domains.map((domain) => hostileContact(domain, DOMAINS.indexOf(domain))),
          meta: {
            source: { dataset: '-Licensed contacts', method: 'licensed', publisher: 'Example' },
            domains_requested: domains.length,
            limit: 200,
          },
          next_cursor: null,
        },
      };
    }
    if (request.path === '/api/v1/verify') {
      return {
        body: {
          data: { email: request.query.get('email'), status: 'valid', checked_at: '2025-06-30T12:00:00Z' },
          meta: { units_charged: 1, units_used: 1 },
        },
      };
    }
    return { status: 404, body: errorBody('not_found', 'no such path') };
  });
  // verify keeps its input's columns: a CSV whose cells start with triggers (every field quoted).
  const quote = (value: string) => `"${value.replaceAll('"', '""')}"`;
  const lines = DOMAINS.map((domain, index) =>
    [hostile(index), hostile(index + 1), `ada@${domain}`].map(quote).join(','),
  );
  await writeFile(join(dir, 'people.csv'), `name,title,business_email\n${lines.join('\n')}\n`);
});
afterAll(async () => {
  await service?.close();
});

const rowIndex = (row: Record<string, string>) => DOMAINS.indexOf(row.domain ?? row.business_email!.split('@')[1]!);
const COMMANDS: Array<{
  name: string;
  args: string[];
  input?: string;
  served: (row: Record<string, string>) => Record<string, string>;
}> = [
  { name: 'companies', args: ['companies', '-t', 'Shopify'], served: (row) => companyCells(rowIndex(row)) },
  {
    name: 'contacts',
    args: ['contacts'],
    input: `${DOMAINS.join('\n')}\n`,
    served: (row) => contactCells(rowIndex(row)),
  },
  { name: 'verify', args: ['verify', '--yes', '--no-cache'], served: (row) => verifyCells(rowIndex(row)) },
  {
    name: 'pipeline',
    args: ['pipeline', '-t', 'Shopify'],
    // The contact's columns, then the company's (pipeline has no company phone or LinkedIn column).
    served: (row) => {
      const { company_name, industry, country, technologies } = companyCells(rowIndex(row));
      return {
        ...contactCells(rowIndex(row)),
        company_name: company_name!,
        industry: industry!,
        country: country!,
        technologies: technologies!,
      };
    },
  },
];

describe('the formula guard in the CSV of every command (no spreadsheet program)', () => {
  /**
   * companies' guarded CSV is spawned, to show the binary writes the same; the other commands' run
   * main() in process (the cells are main()'s), and so do the unguarded ones, which only show the
   * check can fail.
   */
  const csvOf = async (args: string[], input: string | undefined, extra: string[] = []) => {
    const withFile = args[0] === 'verify' ? [...args, '--file', join(dir, 'people.csv')] : args;
    const spawned = args[0] === 'companies' && extra.length === 0;
    const run = await (spawned ? runCli : runInProcess)([...withFile, '--format', 'csv', ...extra], {
      url: service.url,
      apiKey: GUARD_KEY,
      input: input ?? '',
    });
    expect(run.code, run.stderr).toBe(0);
    const rows = csvRecords(run.stdout);
    expect(rows).toHaveLength(DOMAINS.length);
    return rows;
  };

  it.each(COMMANDS)(
    "$name: every cell that starts with = + - @ tab CR LF is written with a leading '",
    async ({ args, input, served }) => {
      const rows = await csvOf(args, input);
      const firsts = new Set<string>();
      for (const row of rows) {
        for (const [column, value] of Object.entries(served(row))) {
          expect(row[column], `${column} of row ${rowIndex(row)}`).toBe(`'${value}`);
          firsts.add(value[0]!);
        }
        // And no cell anywhere in the file starts with a trigger.
        for (const [column, cell] of Object.entries(row))
          expect(TRIGGER_FIRST.test(cell), `${column}: ${JSON.stringify(cell)}`).toBe(false);
      }
      // The service's values met every trigger (verify's input cannot hold a lone CR).
      expect([...firsts].sort()).toEqual(
        (args[0] === 'verify' ? ['=', '+', '-', '@', '\t', '\n'] : ['=', '+', '-', '@', '\t', '\r', '\n']).sort(),
      );
    },
  );

  it.each(COMMANDS)(
    '$name --no-escape-formulas writes the same cells as they came (so the check above can fail)',
    async ({ args, input, served }) => {
      for (const row of await csvOf(args, input, ['--no-escape-formulas'])) {
        for (const [column, value] of Object.entries(served(row))) expect(row[column], column).toBe(value);
      }
    },
  );
});

const HOSTILE_NAMES = ['=1+1', '+2+3', '-1+4', '@SUM(1,1)', '=HYPERLINK("http://evil.example","click")'];
const KEY = 'sk_test_sheet_c0ffee';

/** LibreOffice imports CSV files (one start for all of them) and writes each as flat ODS; returns their XML, in order. */
async function importIntoLibreOffice(csvPaths: string[], dir: string): Promise<string[]> {
  await promisify(execFile)(
    LIBREOFFICE.command,
    [
      `-env:UserInstallation=file://${dir}/lo-profile`,
      '--headless',
      '--convert-to',
      'fods',
      '--outdir',
      dir,
      ...csvPaths,
    ],
    { timeout: 120_000 },
  );
  return Promise.all(csvPaths.map((path) => readFile(path.replace(/\.csv$/, '.fods'), 'utf8')));
}

const cells = (fods: string) => fods.match(/<table:table-cell[^>]*>/g) ?? [];
const decode = (xml: string) =>
  xml
    .replace(/&apos;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
const texts = (fods: string) => [...fods.matchAll(/<text:p>([^<]*)<\/text:p>/g)].map((match) => decode(match[1]!));

describe.skipIf(LIBREOFFICE.skip)('spreadsheet safety (LibreOffice)', () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    const page = companiesPage([]);
    page.data = HOSTILE_NAMES.map((name, index) =>
      sampleCompany(`hostile${index}.com`, { company_name: name, phone: '+1 415 555 0100' }),
    );
    server = await startScriptedServer([{ body: page }]);
  });
  afterAll(async () => {
    await server?.close();
  });

  /** The same companies written with the guard and without it (--no-escape-formulas), as LibreOffice imported them. */
  let guarded: string;
  let raw: string;
  beforeAll(async () => {
    const dir = await scratchDir();
    const paths = [join(dir, 'companies.csv'), join(dir, 'raw.csv')];
    // Both in process (the guarded CSV is spawned above): what is checked here is LibreOffice's reading.
    expect(
      (await runInProcess(['companies', '-t', 'Shopify', '-o', paths[0]!], { url: server.url, apiKey: KEY, cwd: dir }))
        .code,
    ).toBe(0);
    expect(
      (
        await runInProcess(['companies', '-t', 'Shopify', '--no-escape-formulas', '-o', paths[1]!], {
          url: server.url,
          apiKey: KEY,
        })
      ).code,
    ).toBe(0);
    [guarded, raw] = (await importIntoLibreOffice(paths, dir)) as [string, string];
  }, 180_000);

  it('every cell that starts with = + - @ is imported as text, never as a formula', () => {
    expect(cells(guarded).length).toBeGreaterThan(HOSTILE_NAMES.length * 5);
    expect(cells(guarded).filter((cell) => cell.includes('table:formula'))).toEqual([]);
    // The text shown is the value with the guard's apostrophe: nothing was computed.
    expect(texts(guarded)).toEqual(expect.arrayContaining(HOSTILE_NAMES.map((name) => `'${name}`)));
  });

  it('a phone number is shown as written, without an apostrophe, and is not a formula (issue 36)', () => {
    expect(texts(guarded)).toContain('+1 415 555 0100');
    expect(texts(guarded)).not.toContain("'+1 415 555 0100");
  });

  it('without the guard (--no-escape-formulas) LibreOffice does run them: the check above can fail', () => {
    expect(cells(raw).some((cell) => cell.includes('table:formula="of:=1+1"'))).toBe(true);
  });
});
