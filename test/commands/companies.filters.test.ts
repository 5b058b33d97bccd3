/**
 * Issue 13, "filters mean what they say" and "counts that are true", as a user sees them: the built
 * binary against the sandbox, every expected set from the independent client. In a table of ways to
 * write one flag, the first is spawned and the others run the same main() in process (runInProcess).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir } from '../helpers/cli.js';
import { csvRecords } from '../helpers/csv.js';
import { allCompanies, call, qs, sandboxStats } from '../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ companies: 5_000 });
});
afterAll(async () => {
  await sandbox?.close();
});

const prospect = (args: string[], extra: Parameters<typeof runCli>[1] = {}) =>
  runCli(args, { url: sandbox.url, apiKey: KEY, ...extra });
const inProcess = (args: string[]) => runInProcess(args, { url: sandbox.url, apiKey: KEY });
const domains = (csv: string) => csvRecords(csv).map((row) => row.domain);
/** The contract's order (row 6), written here apart from src: crux_rank, then domain by code points. */
const inServiceOrder = (rows: any[]) =>
  [...rows].sort((a, b) => a.crux_rank - b.crux_rank || (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0));
const union = (...lists: any[][]) =>
  inServiceOrder([...new Map(lists.flat().map((row) => [row.domain, row])).values()]).map((row) => row.domain);
const requests = async () => (await sandboxStats(sandbox.url)).requests as unknown;
const serviceTotal = async (params: Record<string, string>) =>
  (await call(sandbox.url, `/api/v1/companies?${qs({ ...params, limit: 1 })}`, { key: KEY })).body.meta.total as number;

describe('repeated countries and employee ranges are any-of', () => {
  it('two countries give the union of the two single-country exports, in service order, each company once', async () => {
    const us = await allCompanies(sandbox.url, KEY, { technology: 'Shopify', country: 'united states' });
    const canada = await allCompanies(sandbox.url, KEY, { technology: 'Shopify', country: 'canada' });
    const run = await prospect(['companies', '-t', 'Shopify', '--country', 'united states', '--country', 'canada']);
    expect(run.code).toBe(0);
    expect(canada.length).toBeGreaterThan(0);
    expect(domains(run.stdout)).toEqual(union(us, canada));
  });

  it('a range list, a repeated range and an open band: the companies in any of them, overlaps once', async () => {
    const shopify = await allCompanies(sandbox.url, KEY, { technology: 'Shopify' });
    const inLabels = (...labels: string[]) => shopify.filter((row) => labels.includes(row.employee_range));
    // In process: the first test spawned a filtered listing; this one is about the set selected.
    const list = await inProcess(['companies', '-t', 'Shopify', '--employee-range', '1-10,51-200']);
    expect(list.code).toBe(0);
    expect(domains(list.stdout)).toEqual(union(inLabels('1-10', '51-200')));
    const overlapping = await inProcess([
      'companies',
      '-t',
      'Shopify',
      '--employee-range',
      '1-50',
      '--employee-range',
      '11-200',
    ]);
    expect(domains(overlapping.stdout)).toEqual(union(inLabels('1-10', '11-50', '51-200')));
    // 500+ would cut the 201-500 band (exit 2, issue 36); 501+ starts at a band's edge.
    const open = await inProcess(['companies', '-t', 'Shopify', '--employee-range', '501+']);
    expect(open.code).toBe(0);
    const large = shopify.filter((row) => Number(row.employee_range.split('-')[0]) >= 501);
    expect(large.length).toBeGreaterThan(0);
    expect(domains(open.stdout)).toEqual(union(large));
  });

  it('countries as people write them: USA, us and "United States" are "united states"; UK is the united kingdom', async () => {
    const named = await inProcess(['companies', '-t', 'Shopify', '--country', 'united states']);
    expect(named.code).toBe(0);
    for (const written of ['USA', 'us', 'United States']) {
      const run = await inProcess(['companies', '-t', 'Shopify', '--country', written]);
      expect(run.code, written).toBe(0);
      expect(run.stdout, written).toBe(named.stdout);
    }
    const uk = await allCompanies(sandbox.url, KEY, { technology: 'Shopify', country: 'united kingdom' });
    const run = await inProcess(['companies', '-t', 'Shopify', '--country', 'uk']);
    expect(run.code).toBe(0);
    expect(domains(run.stdout)).toEqual(union(uk));
  });
});

describe('a typo is never an empty success', () => {
  it.each([
    ['an unknown technology', ['-t', 'Shopfy'], /Shopify/],
    ['an unknown technology checked locally', ['-t', 'Shopify', '-t', 'Klavyio'], /Klaviyo/],
    ['an unknown country', ['-t', 'Shopify', '--country', 'Atlantis'], /not a country/],
    ['a range that covers no label', ['-t', 'Shopify', '--employee-range', '2-5'], /1-10/],
  ])('%s exits 2 with suggestions, even with --allow-empty, and writes no file', async (what, filters, suggestion) => {
    const dir = await scratchDir();
    const target = join(dir, 'out.csv');
    const run = await (what === 'an unknown technology' ? prospect : inProcess)([
      'companies',
      ...filters,
      '--allow-empty',
      '-o',
      target,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(suggestion);
    expect(existsSync(target)).toBe(false);
  });

  it('valid filters that match nobody exit 3, and --allow-empty makes that a header-only file', async () => {
    // Found with the independent client: a country and a band with no Shopify company in this dataset.
    const filters = ['-t', 'Shopify', '--country', 'egypt', '--employee-range', '10001+'];
    const check = await call(
      sandbox.url,
      `/api/v1/companies?${qs({ technology: 'Shopify', country: 'egypt', employee_range: '10001-100000' })}`,
      { key: KEY },
    );
    expect(check.body.error.code).toBe('no_match');
    expect((await prospect(['companies', ...filters])).code).toBe(3);
    const dir = await scratchDir();
    const target = join(dir, 'out.csv');
    // In process: the exit 3 above is the binary's; this is the file --allow-empty writes.
    const allowed = await inProcess(['companies', ...filters, '--allow-empty', '-o', target]);
    expect(allowed.code).toBe(0);
    expect((await readFile(target, 'utf8')).trimEnd().split('\n')).toHaveLength(1);
    // The record beside the file, as contacts and pipeline write it for their empty results.
    const record = JSON.parse(await readFile(`${target}.meta.json`, 'utf8'));
    expect([record.command, record.rows, record.filters.technologies]).toEqual(['companies', 0, ['Shopify']]);
  });
});

describe('counts that are true', () => {
  it('a local technology filter: the wider count is named as such, never "of" it; the sidecar says the same', async () => {
    const wordpress = await serviceTotal({ technology: 'WordPress' });
    const dir = await scratchDir();
    const target = join(dir, 'wp.csv');
    // --verbose: a deliberate --max is a summary line, not a warning (issue 36).
    const run = await prospect([
      '--verbose',
      'companies',
      '-t',
      'WordPress',
      '-t',
      'WooCommerce',
      '--max',
      '5',
      '-o',
      target,
    ]);
    expect(run.code).toBe(0);
    const total = wordpress.toLocaleString('en-US');
    expect(run.stderr).toContain(
      `Stopped at --max 5; more companies match (${total} run WordPress; the WooCommerce filter is applied locally).`,
    );
    expect(run.stderr).not.toContain(`of ${total}`);
    const sidecar = JSON.parse(await readFile(`${target}.meta.json`, 'utf8'));
    // Every run record has the same fields (docs/run-record.md): a count that is not the set's is null.
    expect(sidecar.total).toBeNull();
    expect(sidecar.contact_count).toBeNull();
    expect(sidecar.service_count).toMatchObject({ companies: wordpress, applied_locally: ['WooCommerce'] });
  });

  it('any-of countries: "of N" is the size of the union, in the message and in the sidecar', async () => {
    const expected =
      (await serviceTotal({ technology: 'Shopify', country: 'united states' })) +
      (await serviceTotal({ technology: 'Shopify', country: 'canada' }));
    const dir = await scratchDir();
    const target = join(dir, 'shops.json');
    // In process: the test above spawned a run that reports a count; this one is about which count.
    const run = await inProcess([
      '--verbose',
      'companies',
      '-t',
      'Shopify',
      '--country',
      'US',
      '--country',
      'CA',
      '--max',
      '3',
      '-o',
      target,
    ]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`Stopped at --max 3 of ${expected.toLocaleString('en-US')}; more companies match.`);
    expect(JSON.parse(await readFile(`${target}.meta.json`, 'utf8')).total).toBe(expected);
    expect(JSON.parse(await readFile(target, 'utf8')).meta.total).toBe(expected);
  });
});

/** In process: test/commands/options.test.ts spawns both refusals (`-o x.xls`, a missing directory). */
describe('outputs that cannot be written are refused before any call', () => {
  it('an extension prospect cannot write is exit 2, naming the formats it can', async () => {
    const dir = await scratchDir();
    const before = await requests();
    const run = await inProcess(['companies', '-t', 'Shopify', '-o', join(dir, 'x.xls')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/cannot write \.xls /);
    expect(run.stderr).toMatch(/\.csv, \.json, \.ndjson/);
    expect(existsSync(join(dir, 'x.xls'))).toBe(false);
    expect(await requests()).toEqual(before);
  });

  it('a directory that does not exist is exit 7 (output not writable), as the exit-code table says', async () => {
    const before = await requests();
    const run = await inProcess(['companies', '-t', 'Shopify', '-o', '/nonexistent/dir/x.csv']);
    expect(run.code).toBe(7);
    expect(run.stderr).toMatch(/\/nonexistent\/dir does not exist/);
    expect(await requests()).toEqual(before);
  });
});
