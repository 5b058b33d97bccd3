/**
 * The monthly crawl (issue 45): a sandbox asked for a month serves that month's crawl. Two months are
 * read as listings through the independent client and compared domain by domain, here and not by
 * the sandbox's own code: a few percent of companies differ, by switches within a category among
 * others, a few enter or leave the scope, and the sandbox asked for no month serves what it always did.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildDataset, generateDataset, type Dataset } from '../../src/sandbox/dataset/dataset.js';
import { cachedColumns } from '../../src/sandbox/dataset/disk-cache.js';
import { runInProcess, scratchDir } from '../helpers/cli.js';
import { scratchDirSync } from '../helpers/scratch.js';
import { allCompanies, allCompanyPages, call, qs, type RawResponse } from '../helpers/independent-client.js';
import { asOfDay, SANDBOX_KEYS, startTestSandbox, testDataset, type TestSandbox } from '../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.scale;
let october: TestSandbox;
let november: TestSandbox;
let reference: TestSandbox;
let plain: TestSandbox;

beforeAll(async () => {
  [october, november, reference, plain] = await Promise.all([
    startTestSandbox(asOfDay('2026-10-15')),
    startTestSandbox(asOfDay('2026-11-15')),
    startTestSandbox({ crawl: '2025-06' }),
    startTestSandbox(),
  ]);
});
afterAll(async () => {
  await Promise.all([october, november, reference, plain].map((sandbox) => sandbox?.close()));
});

interface Entry {
  t: string;
  c: string;
}
type Row = { domain: string; technologies: Entry[]; country: string; employee_range: string };

const byDomain = (rows: Row[]) => new Map(rows.map((row) => [row.domain, row]));
const names = (row: Row) => new Set(row.technologies.map((entry) => entry.t));

/** The diff of two listings, domain by domain: what a client of the service can see. */
function diff(before: Row[], after: Row[]) {
  const was = byDomain(before);
  const now = byDomain(after);
  const added = [...now.keys()].filter((domain) => !was.has(domain));
  const gone = [...was.keys()].filter((domain) => !now.has(domain));
  const changed = [...now.keys()].filter((domain) => {
    if (!was.has(domain)) return false;
    const [a, b] = [names(was.get(domain) as Row), names(now.get(domain) as Row)];
    return a.size !== b.size || [...a].some((name) => !b.has(name));
  });
  return { was, now, added, gone, changed, union: new Set([...was.keys(), ...now.keys()]).size };
}

/** The domains of a whole listing; none when no company matches (422 no_match). */
async function domainsListed(sandbox: TestSandbox, params: Record<string, string>): Promise<string[]> {
  const domains: string[] = [];
  let cursor: string | undefined;
  do {
    const res = await call(sandbox.url, `/api/v1/companies?${qs({ ...params, limit: 1000, cursor })}`, { key: KEY });
    if (res.status === 422 && res.body.error.code === 'no_match') return domains;
    expect(res.status, res.text).toBe(200);
    domains.push(...res.body.data.map((row: Row) => row.domain));
    cursor = res.body.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return domains;
}

describe('two months of the crawl', () => {
  let shopify: ReturnType<typeof diff>;
  beforeAll(async () => {
    const [before, after] = await Promise.all(
      [october, november].map((sandbox) => allCompanies(sandbox.url, KEY, { technology: 'Shopify' })),
    );
    shopify = diff(before as Row[], after as Row[]);
  });

  it('differ for a few percent of -t Shopify companies: not none, not most', () => {
    const differing = shopify.added.length + shopify.gone.length + shopify.changed.length;
    expect(shopify.union).toBeGreaterThan(2000);
    expect(differing / shopify.union).toBeGreaterThan(0.02);
    expect(differing / shopify.union).toBeLessThan(0.08);
  });

  it('include switches within a category: one technology dropped for another of its category', () => {
    const switches = shopify.changed.filter((domain) => {
      const [a, b] = [shopify.was.get(domain) as Row, shopify.now.get(domain) as Row];
      const removed = a.technologies.filter((entry) => !names(b).has(entry.t));
      const added = b.technologies.filter((entry) => !names(a).has(entry.t));
      return removed.some((r) => added.some((entry) => entry.c === r.c));
    });
    expect(switches.length).toBeGreaterThan(5);
  });

  it('have companies that left the scope and companies that entered it: in no listing of the other month', async () => {
    // The platform is never switched, so a Shopify store new or gone left or entered the crawl's scope.
    expect(shopify.gone.length).toBeGreaterThan(0);
    expect(shopify.added.length).toBeGreaterThan(0);
    for (const [domain, row, other] of [
      [shopify.gone[0], shopify.was.get(shopify.gone[0] as string), november],
      [shopify.added[0], shopify.now.get(shopify.added[0] as string), october],
    ] as Array<[string, Row, TestSandbox]>) {
      for (const entry of row.technologies) {
        const params = { technology: entry.t, country: row.country, employee_range: row.employee_range };
        expect(await domainsListed(other, params), `${domain} under ${entry.t}`).not.toContain(domain);
      }
    }
  }, 120_000);

  it('list under a technology exactly the companies whose month stack has it, each with that whole stack', async () => {
    // Two posting lists read against each other: Shopify stores running Klaviyo are Klaviyo sites running Shopify.
    const [stores, klaviyo] = await Promise.all([
      allCompanies(november.url, KEY, { technology: 'Shopify' }),
      allCompanies(november.url, KEY, { technology: 'Klaviyo' }),
    ]);
    const runs = (name: string) => (row: Row) => row.technologies.some((entry) => entry.t === name);
    const fromStores = (stores as Row[]).filter(runs('Klaviyo'));
    const fromKlaviyo = (klaviyo as Row[]).filter(runs('Shopify'));
    expect(fromStores.length).toBeGreaterThan(100);
    expect(JSON.stringify(fromKlaviyo)).toBe(JSON.stringify(fromStores));
  });

  it("split into parts (contract row 37), give the month's listing, the bytes of one cursor", async () => {
    // The US stores alone, a tenth of the walk, in pages of 25: more than 8 pages, so --concurrency 8
    // splits them into 8 parts of more than a page each, on average.
    const args = (concurrency: string) => [
      '--page-size',
      '25',
      '--verbose',
      'companies',
      '-t',
      'Shopify',
      '--country',
      'united states',
      '--concurrency',
      concurrency,
      '-f',
      'ndjson',
    ];
    const options = { url: november.url, apiKey: KEY, timeoutMs: 120_000 };
    const split = await runInProcess(args('8'), options);
    const single = await runInProcess(args('1'), options);
    expect(split.code, split.stderr).toBe(0);
    expect(split.stderr).toMatch(/as 8 parts at once/);
    expect(split.stdout).toBe(single.stdout);
    const domains = split.stdout
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as Row).domain);
    const us = [...shopify.now.values()].filter((row) => row.country === 'united states');
    expect(domains.length).toBeGreaterThan(8 * 25);
    expect(domains).toEqual(us.map((row) => row.domain));
  }, 120_000);

  it('count in meta.total exactly the rows listed, and say which crawl answered', async () => {
    const pages = await allCompanyPages(november.url, KEY, { technology: 'Shopify' });
    expect(pages[0].meta.total).toBe(shopify.now.size);
    expect(pages.every((page: { meta: { source: { crawl?: string } } }) => page.meta.source.crawl === '2026-11')).toBe(
      true,
    );
  });

  it("refuse the other month's cursor", async () => {
    const first = await call(october.url, `/api/v1/companies?${qs({ technology: 'Shopify', limit: 100 })}`, {
      key: KEY,
    });
    const cursor = first.body.next_cursor as string;
    const own = await call(october.url, `/api/v1/companies?${qs({ technology: 'Shopify', limit: 100, cursor })}`, {
      key: KEY,
    });
    expect(own.status).toBe(200);
    for (const other of [november, plain]) {
      const res = await call(other.url, `/api/v1/companies?${qs({ technology: 'Shopify', limit: 100, cursor })}`, {
        key: KEY,
      });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_cursor');
      expect(res.body.error.reason).toContain(other === november ? 'issued for the crawl of 2026-11' : 'issued');
    }
  });
});

describe('the client', () => {
  it('keeps the crawl that answered in FILE.meta.json and names it with --verbose; a service without it is fine', async () => {
    const dir = await scratchDir();
    for (const [sandbox, crawl] of [
      [november, '2026-11'],
      [plain, undefined],
    ] as Array<[TestSandbox, string | undefined]>) {
      const target = join(dir, `${crawl ?? 'none'}.csv`);
      const args = ['companies', '-t', 'Shopify', '--max', '5', '--verbose', '-o', target];
      const run = await runInProcess(args, { url: sandbox.url, apiKey: KEY, cwd: dir });
      expect(run.code).toBe(0);
      const record = JSON.parse(await readFile(`${target}.meta.json`, 'utf8'));
      expect(record.source.crawl).toBe(crawl);
      expect(run.stderr.includes('crawl 2026-11')).toBe(crawl !== undefined);
      expect(run.stderr).toContain('Source: Web technology crawl (monthly crawl of rendered pages, since 2019');
    }
  });
});

describe('the reference crawl', () => {
  it('is what a sandbox asked for no month serves: the same rows, its source without a crawl', async () => {
    const path = `/api/v1/companies?${qs({ technology: 'Shopify', country: 'united states', limit: 1000 })}`;
    const [asked, unasked] = (await Promise.all([reference, plain].map((s) => call(s.url, path, { key: KEY })))) as [
      RawResponse,
      RawResponse,
    ];
    expect(asked.body.data.length).toBeGreaterThan(100);
    expect(JSON.stringify(asked.body.data)).toBe(JSON.stringify(unasked.body.data));
    expect(asked.body.meta.source.crawl).toBe('2025-06');
    expect([reference.crawl, plain.crawl, november.crawl]).toEqual(['2025-06', '2025-06', '2026-11']);
    expect(unasked.body.meta.source).toEqual({
      dataset: 'Web technology crawl',
      method: 'monthly crawl of rendered pages',
      publisher: 'prospect sandbox (synthetic data)',
      history_since: '2019',
    });
  });

  it('is the generated dataset, row for row', async () => {
    const dataset = testDataset();
    const rows = await allCompanies(plain.url, KEY, { technology: 'Klaviyo', country: 'germany' });
    const expected = rows.map((row: Row) => dataset.companyRow(dataset.companyIndex(row.domain) as number));
    expect(rows.length).toBeGreaterThan(10);
    expect(rows).toEqual(expected);
  });
});

describe('a month of the crawl', () => {
  const companies = 2_000;

  it('is the same bytes for the same seed and month, whichever was built before', () => {
    const november = generateDataset({ companies, seed: 1, crawl: '2026-11' });
    generateDataset({ companies, seed: 1, crawl: '2031-02' });
    const again = generateDataset({ companies, seed: 1, crawl: '2026-11' });
    const json = (d: Dataset) => Array.from({ length: d.size }, (_, i) => d.companyRowJson(i)).join('\n');
    expect(json(again)).toBe(json(november));
    expect(json(generateDataset({ companies, seed: 2, crawl: '2026-11' }))).not.toBe(json(november));
    expect(json(generateDataset({ companies, seed: 1, crawl: '2026-12' }))).not.toBe(json(november));
  }, 60_000);

  it('differs from the reference more the further it is, before the reference as after it', () => {
    const base = generateDataset({ companies, seed: 1 });
    const differing = (month: string) => {
      const d = generateDataset({ companies, seed: 1, crawl: month });
      let count = 0;
      for (let i = 0; i < companies; i++) if (d.companyRowJson(i) !== base.companyRowJson(i)) count++;
      return count / companies;
    };
    const [near, far, past] = [differing('2025-07'), differing('2027-06'), differing('2023-06')];
    expect(near).toBeGreaterThan(0.01);
    expect(near).toBeLessThan(0.1);
    expect(far).toBeGreaterThan(3 * near);
    expect(past).toBeGreaterThan(3 * near);
    expect(far).toBeLessThan(0.9);
  }, 60_000);

  it('is computed over the cached columns: the one file on disk serves every month', () => {
    const dir = scratchDirSync();
    const key = { companies: 1_500, seed: 5 };
    const months = ['2026-11', '2024-02'].map((crawl) => buildDataset({ ...key, crawl, cacheDir: dir }));
    expect(readdirSync(dir)).toEqual([expect.stringMatching(/^dataset-1500-5-[0-9a-f]{16}\.bin$/)]);
    const build = vi.fn(() => {
      throw new Error('the file on disk should have been read');
    });
    expect(cachedColumns(dir, key, build).techs.length).toBeGreaterThan(0);
    expect(build).not.toHaveBeenCalled();
    const json = (d: Dataset) => Array.from({ length: d.size }, (_, i) => d.companyRowJson(i)).join('\n');
    expect(json(months[0] as Dataset)).toBe(json(generateDataset({ ...key, crawl: '2026-11' })));
  }, 60_000);

  it('refuses a month not written YYYY-MM', () => {
    expect(() => generateDataset({ companies, seed: 1, crawl: '2026-13' })).toThrow(/YYYY-MM/);
  });
});
