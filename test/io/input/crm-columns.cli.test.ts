/**
 * Input as CRMs export it (issue 36): the domain or address column found by the names CRM exports
 * use (the list the exclusion files read, one place), an ambiguous header refused with exit 2
 * naming the columns and the flag, and a workbook read wherever a CSV is.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir } from '../../helpers/cli.js';
import { csvRecords } from '../../helpers/csv.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

const inProcess = (args: string[], input?: string) => runInProcess(args, { url: sandbox.url, apiKey: KEY, input });

describe('a CRM export as input', () => {
  it('contacts reads a Website column (spawned), the same rows as a plain list', async () => {
    const dir = await scratchDir();
    await writeFile(
      join(dir, 'accounts.csv'),
      'Account Name,Website\nMeadow,https://www.meadowfitness.com/about\nHarbor,harborsupply.com\n',
    );
    const run = await runCli(['contacts', '--domains-file', 'accounts.csv', '--format', 'csv'], {
      url: sandbox.url,
      apiKey: KEY,
      cwd: dir,
    });
    expect(run.code, run.stderr).toBe(0);
    const plain = await inProcess(['contacts', '--format', 'csv'], 'meadowfitness.com\nharborsupply.com\n');
    expect(run.stdout).toBe(plain.stdout);
    expect(csvRecords(run.stdout).length).toBeGreaterThan(0);
  });

  it.each([
    ['Company Domain Name', 'harborsupply.com'],
    ['Website URL', 'https://harborsupply.com'],
    ['URL', 'harborsupply.com'],
  ])('contacts reads a "%s" column (in process)', async (header, value) => {
    const run = await inProcess(['contacts', '--format', 'csv'], `Name,${header}\nHarbor,${value}\n`);
    expect(run.code, run.stderr).toBe(0);
    expect(new Set(csvRecords(run.stdout).map((row) => row.domain))).toEqual(new Set(['harborsupply.com']));
  });

  it('verify reads an "Email Address" column (in process)', async () => {
    const run = await inProcess(['verify', '--dry-run'], 'Name,Email Address\nAna,ana@harborsupply.com\n');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).toMatch(/1 unique valid address/);
  });

  it('two CRM names for the column: exit 2, naming both and --domain-column; --domain-column settles it', async () => {
    const input = 'Name,Website,Company Domain Name\nHarbor,harborsupply.com,meadowfitness.com\n';
    const run = await inProcess(['contacts'], input);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'more than one column could hold the domain: "Website", "Company Domain Name"; name the one to read with --domain-column NAME',
    );
    const chosen = await inProcess(['contacts', '--format', 'csv', '--domain-column', 'Website'], input);
    expect(chosen.code, chosen.stderr).toBe(0);
    expect(new Set(csvRecords(chosen.stdout).map((row) => row.domain))).toEqual(new Set(['harborsupply.com']));
  });

  it('a header without any known name says --domain-column (in process)', async () => {
    const run = await inProcess(['contacts'], 'Name,Site\nHarbor,harborsupply.com\n');
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/columns are: Name, Site; name the one to read with --domain-column NAME/);
  });
});

describe('xlsx wherever CSV is read', () => {
  it("prospect's own workbook given to contacts and verify: read as its first sheet, never as Windows-1252", async () => {
    const dir = await scratchDir();
    const workbook = join(dir, 'people.xlsx');
    const made = await inProcess(['contacts', '--format', 'csv', '-o', workbook], 'harborsupply.com\n');
    expect(made.code, made.stderr).toBe(0);
    const csv = await inProcess(['contacts', '--format', 'csv'], 'harborsupply.com\n');
    const fromWorkbook = await inProcess(['verify', '--file', workbook, '--dry-run']);
    expect(fromWorkbook.code, fromWorkbook.stderr).toBe(0);
    expect(fromWorkbook.stderr).not.toMatch(/Windows-1252|iconv/);
    const addresses = new Set(
      csvRecords(csv.stdout)
        .map((row) => row.business_email)
        .filter(Boolean),
    );
    expect(fromWorkbook.stdout + fromWorkbook.stderr).toContain(`${addresses.size} unique valid address`);
    const again = await inProcess(['contacts', '--domains-file', workbook, '--format', 'csv']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(csv.stdout);
  });

  it('a workbook on standard input is exit 2 with the way to give it', async () => {
    const dir = await scratchDir();
    const workbook = join(dir, 'list.xlsx');
    expect((await inProcess(['companies', '-t', 'Shopify', '--max', '3', '-o', workbook])).code).toBe(0);
    const run = await runCli(['contacts'], {
      url: sandbox.url,
      apiKey: KEY,
      input: await import('node:fs').then((fs) => fs.readFileSync(workbook)),
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/zip file \(an Excel workbook\?\).*\n.*--domains-file FILE\.xlsx/);
    expect(run.stderr).not.toMatch(/Windows-1252/);
  });
});
