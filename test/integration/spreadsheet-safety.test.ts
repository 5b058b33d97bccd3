import { spawnSync, execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, scratchDir } from '../helpers/cli.js';
import { companiesPage, sampleCompany, startScriptedServer, type ScriptedServer } from '../helpers/scripted-server.js';

/**
 * The formula guard checked by a real spreadsheet program: LibreOffice imports the CSV and we read
 * back, from the flat ODS it writes, whether any cell became a formula.
 */
const SOFFICE = ['soffice', 'libreoffice'].find((name) => spawnSync(name, ['--version'], { encoding: 'utf8' }).status === 0);
if (!SOFFICE) console.log('spreadsheet-safety: skipped, LibreOffice (soffice) is not installed here; `apt-get install libreoffice-calc-nogui` to run it.');

const HOSTILE_NAMES = ['=1+1', '+2+3', '-1+4', '@SUM(1,1)', '=HYPERLINK("http://evil.example","click")'];
const KEY = 'sk_test_sheet_c0ffee';

let server: ScriptedServer;
beforeAll(async () => {
  const page = companiesPage([]);
  page.data = HOSTILE_NAMES.map((name, index) => sampleCompany(`hostile${index}.com`, { company_name: name, phone: '+1 415 555 0100' }));
  server = await startScriptedServer([{ body: page }]);
});
afterAll(async () => {
  await server?.close();
});

async function importIntoLibreOffice(csvPath: string, dir: string): Promise<string> {
  await promisify(execFile)(SOFFICE!, [`-env:UserInstallation=file://${dir}/lo-profile`, '--headless', '--convert-to', 'fods', '--outdir', dir, csvPath], { timeout: 120_000 });
  return readFile(csvPath.replace(/\.csv$/, '.fods'), 'utf8');
}

const cells = (fods: string) => fods.match(/<table:table-cell[^>]*>/g) ?? [];
const decode = (xml: string) => xml.replace(/&apos;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
const texts = (fods: string) => [...fods.matchAll(/<text:p>([^<]*)<\/text:p>/g)].map((match) => decode(match[1]!));

describe.skipIf(!SOFFICE)('spreadsheet safety (LibreOffice)', () => {
  it('every cell that starts with = + - @ is imported as text, never as a formula', async () => {
    const dir = await scratchDir();
    const csvPath = join(dir, 'companies.csv');
    const run = await runCli(['companies', '-t', 'Shopify', '-o', csvPath], { url: server.url, apiKey: KEY, cwd: dir });
    expect(run.code).toBe(0);
    const fods = await importIntoLibreOffice(csvPath, dir);
    expect(cells(fods).length).toBeGreaterThan(HOSTILE_NAMES.length * 5);
    expect(cells(fods).filter((cell) => cell.includes('table:formula'))).toEqual([]);
    // The text shown is the value with the guard's apostrophe: nothing was computed.
    expect(texts(fods)).toEqual(expect.arrayContaining(HOSTILE_NAMES.map((name) => `'${name}`)));
  }, 180_000);

  it('without the guard (--no-escape-formulas) LibreOffice does run them: the check above can fail', async () => {
    const dir = await scratchDir();
    const csvPath = join(dir, 'raw.csv');
    const run = await runCli(['companies', '-t', 'Shopify', '--no-escape-formulas', '-o', csvPath], { url: server.url, apiKey: KEY, cwd: dir });
    expect(run.code).toBe(0);
    const fods = await importIntoLibreOffice(csvPath, dir);
    expect(cells(fods).some((cell) => cell.includes('table:formula="of:=1+1"'))).toBe(true);
  }, 180_000);
});
