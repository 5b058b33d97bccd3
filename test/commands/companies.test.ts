import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, runShell, scratchDir } from '../helpers/cli.js';
import { csvRecords } from '../helpers/csv.js';
import { allCompanies, sandboxStats } from '../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, todayUtc, type RunningSandbox } from '../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
/**
 * 20,000 companies: Shopify spans two pages of 1,000 (1,056 companies) and WordPress seven, enough
 * for paging, retries and Retry-After, at a fraction of the default dataset's cost per export.
 */
/** 5,000 companies (the test seed): Shopify's 277 stores, every row of which the listings below compare. */
const DATA = { companies: 5_000, asOf: todayUtc() };
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox(DATA);
});
afterAll(async () => {
  await sandbox?.close();
});

const prospect = (args: string[], extra: Parameters<typeof runCli>[1] = {}) =>
  runCli(args, { url: sandbox.url, apiKey: KEY, ...extra });
/**
 * The same main() in process (runInProcess: the same environment, exit code and key-leak checks): for
 * everything but the first listing, which shows the binary writing one, and `| head`, a pipe closing.
 */
const inProcess = (args: string[], extra: Parameters<typeof runInProcess>[1] = {}) =>
  runInProcess(args, { url: sandbox.url, apiKey: KEY, ...extra });

describe('prospect companies (against the sandbox)', () => {
  it('exports every matching company exactly once, equal to an independent client', async () => {
    const expected = await allCompanies(sandbox.url, KEY, { technology: 'Shopify' });
    // Spawned: this file's one listing through a real process.
    const run = await prospect(['companies', '--technology', 'Shopify']);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const rows = csvRecords(run.stdout);
    const domains = rows.map((row) => row.domain);
    expect(new Set(domains).size).toBe(domains.length);
    expect(domains).toEqual(expected.map((row) => row.domain));
    expect(Object.keys(rows[0]!)).toEqual([
      'domain',
      'company_name',
      'employee_range',
      'industry',
      'country',
      'crux_rank',
      'phone',
      'linkedin_url',
      'tech_count',
      'technologies',
    ]);
    expect(rows[0]!.technologies!.split(';')).toEqual(expected[0].technologies.map((entry: { t: string }) => entry.t));
  });

  it('applies several technologies (AND) and exclusions on the whole stack', async () => {
    const base = await allCompanies(sandbox.url, KEY, { technology: 'Shopify', not_technology: 'Klaviyo' });
    const stack = (row: any) => new Set(row.technologies.map((entry: { t: string }) => entry.t));
    const expected = base
      .filter((row) => stack(row).has('Google Analytics') && !stack(row).has('Facebook Pixel'))
      .map((row) => row.domain);
    expect(expected.length).toBeGreaterThan(0);
    const run = await inProcess([
      'companies',
      '-t',
      'Shopify',
      '-t',
      'google analytics',
      '-T',
      'Klaviyo',
      '-T',
      'Facebook Pixel',
    ]);
    expect(run.code).toBe(0);
    expect(csvRecords(run.stdout).map((row) => row.domain)).toEqual(expected);
  });

  it('stops at --max, and asks the service for no more rows than it writes', async () => {
    const before = await sandboxStats(sandbox.url);
    const run = await inProcess(['companies', '-t', 'jQuery', '--max', '7', '--format', 'ndjson']);
    expect(run.code).toBe(0);
    expect(run.stdout.trimEnd().split('\n')).toHaveLength(7);
    const after = await sandboxStats(sandbox.url);
    expect(after.requests.companies - before.requests.companies).toBe(1);
    expect(after.rows.companies - before.rows.companies).toBe(7);
  });

  it('writes JSON with its provenance, NDJSON with full technology entries, and picks the format from -o', async () => {
    const json = JSON.parse((await inProcess(['companies', '-t', 'Shopify', '--max', '5', '--format', 'json'])).stdout);
    expect(json.data).toHaveLength(5);
    expect(json.meta.source).toMatchObject({
      dataset: expect.any(String),
      method: expect.any(String),
      history_since: expect.any(String),
    });
    expect(json.meta.scope).toMatch(/1,000,000/);
    expect(Object.keys(json.meta.field_fill_rates)).toEqual(
      expect.arrayContaining(['phone', 'linkedin_url', 'description']),
    );
    const ndjson = (await inProcess(['companies', '-t', 'Shopify', '--max', '3', '--format', 'ndjson'])).stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(Object.keys(ndjson[0].technologies[0]).sort()).toEqual(['c', 't', 'v']);

    const dir = await scratchDir();
    const target = join(dir, 'list.json');
    const run = await inProcess(['companies', '-t', 'Shopify', '--max', '4', '-o', target], { cwd: dir });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('');
    expect(JSON.parse(await readFile(target, 'utf8')).data).toHaveLength(4);
    const sidecar = JSON.parse(await readFile(`${target}.meta.json`, 'utf8'));
    expect(sidecar).toMatchObject({ rows: 4, stopped_at_max: true, source: json.meta.source, scope: json.meta.scope });
  });

  it("CSV cells survive a real parser; a phone number keeps its +, any other formula start gets '", async () => {
    const served = await allCompanies(sandbox.url, KEY, { technology: 'Shopify' });
    const phones = served.map((row) => (row.phone as string | null) ?? '');
    expect(phones.filter((phone) => phone.startsWith('+')).length).toBeGreaterThan(10);
    const run = await inProcess(['companies', '-t', 'Shopify', '--columns', 'domain,phone,company_name']);
    const rows = csvRecords(run.stdout);
    expect(Object.keys(rows[0]!)).toEqual(['domain', 'phone', 'company_name']);
    // README "Spreadsheet safety": a phone number (a +, then only digits, spaces and ( ) - ., six digits at
    // least) is written as it is; any other cell that starts like a formula gets the guard's '.
    const phoneNumber = (cell: string) => /^\+[\d\s().-]+$/.test(cell) && (cell.match(/\d/g) ?? []).length >= 6;
    expect(rows.map((row) => row.phone)).toEqual(
      phones.map((phone) => (/^[=+\-@\t\r\n]/.test(phone) && !phoneNumber(phone) ? `'${phone}` : phone)),
    );
    expect(rows.filter((row) => row.phone!.startsWith('+')).length).toBeGreaterThan(10);
    expect(rows.map((row) => row.company_name)).toEqual(served.map((row) => row.company_name));
    const raw = await inProcess(['companies', '-t', 'Shopify', '--columns', 'phone', '--no-escape-formulas']);
    expect(csvRecords(raw.stdout).map((row) => row.phone)).toEqual(phones);
  });

  it('an unknown technology (422 unknown_technology) exits 2 with the reason and suggestions, and leaves no file (nor touches the old one)', async () => {
    const dir = await scratchDir();
    const target = join(dir, 'list.csv');
    await writeFile(target, 'previous export\n');
    const run = await inProcess(['companies', '-t', 'Shopifyy', '-o', target], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/Shopify/);
    expect(run.stderr.split('\n').filter(Boolean).length).toBeLessThanOrEqual(2);
    expect(await readFile(target, 'utf8')).toBe('previous export\n');
    expect(existsSync(`${target}.meta.json`)).toBe(false);
    const fresh = join(dir, 'new.csv');
    // A new name: no file appears either.
    expect((await inProcess(['companies', '-t', 'Shopifyy', '-o', fresh], { cwd: dir })).code).toBe(2);
    expect(existsSync(fresh)).toBe(false);
  });

  it('--allow-empty writes a header-only file, exits 0 and still says why', async () => {
    const dir = await scratchDir();
    const target = join(dir, 'empty.csv');
    // Same technology on both sides is caught before any call (a usage error).
    const run = await inProcess(['companies', '-t', 'Shopify', '-T', 'shopify', '--allow-empty', '-o', target], {
      cwd: dir,
    });
    expect(run.code).toBe(2);
    const nobody = await inProcess(
      [
        'companies',
        '-t',
        'Shopify',
        '--country',
        'united states',
        '--employee-range',
        '10001-100000',
        '-t',
        'Drupal',
        '--allow-empty',
        '-o',
        target,
      ],
      { cwd: dir },
    );
    expect(nobody.code).toBe(0);
    expect(await readFile(target, 'utf8')).toBe(
      'domain,company_name,employee_range,industry,country,crux_rank,phone,linkedin_url,tech_count,technologies\n',
    );
    expect(nobody.stderr).toMatch(/empty result/);
  });

  it('| head -1 ends quietly with exit 0', async () => {
    const piped = await runShell('eval "$PROSPECT companies -t jQuery" | head -1', { url: sandbox.url, apiKey: KEY });
    expect(piped.code).toBe(0);
    expect(piped.stdout).toMatch(/^domain,company_name/);
    expect(piped.stderr).toBe('');
  });

  it('a bad key is refused with exit 4 after exactly one request', async () => {
    const before = (await sandboxStats(sandbox.url)).requests.total;
    const run = await runInProcess(['companies', '-t', 'Shopify'], {
      url: sandbox.url,
      apiKey: 'sk_live_wrong_0123456789',
    });
    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(/401/);
    expect((await sandboxStats(sandbox.url)).requests.total - before).toBe(1);
  });

  it('says how to set a key when none is set, and refuses plain http to a remote host', async () => {
    const noKey = await runInProcess(['companies', '-t', 'Shopify'], { url: sandbox.url });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/PROSPECT_API_KEY/);
    expect(noKey.stderr).toMatch(/--sandbox/);
    // The refusal is before any connection (test/api/client.security.test.ts spawns it).
    const remote = await runInProcess(['companies', '-t', 'Shopify'], { url: 'http://example.com', apiKey: KEY });
    expect(remote.code).toBe(2);
    expect(remote.stderr).toMatch(/http/);
  });

  it('--sandbox works with no configuration at all', async () => {
    const run = await runInProcess(['--sandbox', 'companies', '-t', 'Shopify', '--max', '3']);
    expect(run.code).toBe(0);
    expect(csvRecords(run.stdout)).toHaveLength(3);
  });
});

describe('prospect companies against a failing or slow service', () => {
  let flaky: RunningSandbox;
  let limited: RunningSandbox;
  beforeAll(async () => {
    flaky = await startTestSandbox({ ...DATA, failRate: 0.3 });
    // 20,000 companies: Shopify's 1,056 stores are two pages of 1,000, so the limit is met.
    limited = await startTestSandbox({ seed: 7, companies: 20_000, asOf: todayUtc(), rateLimit: 1 });
  });
  afterAll(async () => {
    await flaky?.close();
    await limited?.close();
  });

  it('recovers from --fail-rate 0.3 with output byte-identical to a clean run', async () => {
    // Pages of 40: Shopify's 277 companies in seven requests, more to fault than WordPress's two
    // pages of 1,000, at a sixth of the rows to write and compare.
    const args = ['--page-size', '40', 'companies', '-t', 'Shopify', '--format', 'ndjson'];
    // Both in process: the retries are main()'s.
    const clean = await inProcess(args);
    const retried = await runInProcess(args, { url: flaky.url, apiKey: KEY, timeoutMs: 120_000 });
    expect(retried.code).toBe(0);
    expect(retried.stdout).toBe(clean.stdout);
    const pages = Math.ceil(clean.stdout.trimEnd().split('\n').length / 40);
    expect(pages).toBeGreaterThan(5);
    // Faults really happened: more requests than pages.
    expect((await sandboxStats(flaky.url)).requests.total).toBeGreaterThan(pages);
  }, 150_000);

  it('waits out 429 Retry-After and still finishes', async () => {
    const startedAt = Date.now();
    const run = await runInProcess(['companies', '-t', 'Shopify', '--format', 'ndjson'], {
      url: limited.url,
      apiKey: KEY,
    });
    expect(run.code).toBe(0);
    const pages = Math.ceil(run.stdout.trimEnd().split('\n').length / 1000);
    expect(pages).toBeGreaterThan(1);
    // At one request a second, N pages cannot take less than N-1 seconds (a lower bound: load only adds).
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual((pages - 1) * 1000);
  }, 60_000);
});
