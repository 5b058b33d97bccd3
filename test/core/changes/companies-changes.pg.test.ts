/**
 * Issue 45 point 7: `companies --state pg:NAME --changes` against a real PostgreSQL (the test
 * cluster), two crawls as in companies-changes.test.ts. The expected diff is computed here from the
 * two listings; the stored rows are read by SQL, never through prospect.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseStateUrl } from '../../../src/config/state-url.js';
import { openPgStore } from '../../../src/core/state-store/pg/store.js';
import { finishCli, runInProcess, scratchDir, startCli } from '../../helpers/cli.js';
import { csvRecords } from '../../helpers/csv.js';
import { diffListings, startCrawlStub, type CrawlStub, type ExpectedChange } from '../../helpers/crawl-stub.js';
import { allCompanies } from '../../helpers/independent-client.js';
import { POSTGRES, testDatabase, TEST_TEAM_KEY, type TestDatabase } from '../../helpers/postgres.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
const FILTERS = ['-t', 'Shopify', '-t', 'Klaviyo'];

let sandbox: RunningSandbox;
let stub: CrawlStub;
let before: any[];
let expected: ExpectedChange[];

const withKlaviyo = (rows: any[]) => rows.filter((row) => row.technologies.some((entry: any) => entry.t === 'Klaviyo'));
const byDomain = (a: { domain: string }, b: { domain: string }) => (a.domain < b.domain ? -1 : 1);

function asChanges(csv: string): ExpectedChange[] {
  return csvRecords(csv)
    .map((row) => ({
      domain: row.domain!,
      change: row.change as ExpectedChange['change'],
      added: row.technologies_added ? row.technologies_added.split(';') : [],
      removed: row.technologies_removed ? row.technologies_removed.split(';') : [],
    }))
    .sort(byDomain);
}

describe.skipIf(POSTGRES.skip)('companies --changes with --state pg:NAME', () => {
  let db: TestDatabase;
  const env = () => ({ PROSPECT_STATE_URL: db.url, PROSPECT_TEAM_KEY: TEST_TEAM_KEY });
  const prospect = (args: string[]) => runInProcess(args, { url: stub.url, apiKey: KEY, env: env() });

  beforeAll(async () => {
    sandbox = await startTestSandbox({ seed: 7, companies: 20_000, recordTraffic: true });
    stub = await startCrawlStub(sandbox.url);
    before = withKlaviyo(await allCompanies(stub.url, KEY, { technology: 'Shopify' }));
    stub.nextMonth = true;
    const after = withKlaviyo(await allCompanies(stub.url, KEY, { technology: 'Shopify' }));
    expected = diffListings(before, after).sort(byDomain);
    db = await testDatabase('changes');
  });
  afterAll(async () => {
    await stub?.close();
    await sandbox?.close();
  });

  it('writes the independent diff; a run SIGKILLed mid-walk and run again writes it too', async () => {
    const home = await scratchDir('changes-pg-');
    stub.nextMonth = false;
    const first = await prospect(['companies', ...FILTERS, '--state', 'pg:weekly', '-o', join(home, 'first.csv')]);
    expect(first.code, first.stderr).toBe(0);

    // What the team database holds: no domain in clear, nor its unkeyed digest.
    const stored = await db.sql('SELECT domain_hash, data FROM prospect.snapshot_companies');
    expect(stored.rows).toHaveLength(before.length);
    const bytes = Buffer.concat(stored.rows.flatMap((row) => [row.domain_hash, row.data]));
    const domain = before[0].domain as string;
    expect(bytes.includes(Buffer.from(domain))).toBe(false);
    expect(bytes.includes(createHash('sha256').update(domain).digest())).toBe(false);

    stub.nextMonth = true;
    const args = ['--page-size', '50', 'companies', ...FILTERS, '--state', 'pg:weekly', '--changes'];
    stub.pages = 0;
    stub.holdAfter = 12;
    const options = { url: stub.url, apiKey: KEY, cwd: home, env: env() };
    const child = startCli([...args, '-o', join(home, 'killed.csv')], options);
    child.stdin!.end();
    const finished = finishCli(child, { timeoutMs: 60_000 });
    while (stub.pages < 12 && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.kill('SIGKILL');
    expect((await finished).signal).toBe('SIGKILL');
    stub.holdAfter = Infinity;
    const pending = await db.sql("SELECT count(*)::int AS n FROM prospect.snapshots WHERE status = 'pending'");
    expect(pending.rows[0].n).toBe(1);

    const again = await prospect([...args, '-o', join(home, 'changes.csv')]);
    expect(again.code, again.stderr).toBe(0);
    expect(asChanges(await readFile(join(home, 'changes.csv'), 'utf8'))).toEqual(expected);
    // The killed run's pending snapshot is gone, the replaced one too (no walk compares with it): one left.
    const left = await db.sql('SELECT status FROM prospect.snapshots');
    expect(left.rows).toEqual([{ status: 'complete' }]);
  });

  it('pipeline --changes --change new --state pg:NAME asks contacts for the new companies only', async () => {
    const home = await scratchDir('changes-pg-pipeline-');
    stub.nextMonth = false;
    const first = await prospect(['companies', ...FILTERS, '--state', 'pg:monday', '-o', join(home, 'first.csv')]);
    expect(first.code, first.stderr).toBe(0);
    stub.nextMonth = true;
    expect(sandbox.stats().contacts_domains).toEqual([]);
    const out = join(home, 'leads.csv');
    const args = ['pipeline', ...FILTERS, '--changes', '--change', 'new', '--state', 'pg:monday', '--only-new'];
    const run = await prospect([...args, '-o', out]);
    expect(run.code, run.stderr).toBe(0);
    const fresh = expected.filter((change) => change.change === 'new').map((change) => change.domain);
    expect(sandbox.stats().contacts_domains).toEqual([...fresh].sort());
    const leads = new Set(csvRecords(await readFile(out, 'utf8')).map((row) => row.domain));
    expect(leads.size).toBeGreaterThan(0);
    for (const domain of leads) expect(fresh).toContain(domain);
  });

  it('two walks of the same filters at once: the first to publish wins, the other replaces nothing', async () => {
    const url = parseStateUrl(db.url);
    const [one, two] = await Promise.all([
      openPgStore(url, 'machine-one', TEST_TEAM_KEY),
      openPgStore(url, 'machine-two', TEST_TEAM_KEY),
    ]);
    try {
      const company = (domain: string, technologies: string[]) => ({
        domain,
        technologies,
        row: JSON.stringify({ domain }),
        firstSeen: '2026-11-01T00:00:00Z',
        technologyFirstSeen: {},
      });
      const a = await one.snapshots('race').openSeries('filters', '2026-11-01T00:00:00Z');
      const b = await two.snapshots('race').openSeries('filters', '2026-11-01T00:00:01Z');
      await a.add([company('a.example', ['X'])]);
      await b.add([company('b.example', ['Y'])]);
      expect(await a.publish(undefined)).toBe(true);
      expect(await b.publish(undefined)).toBe(false);
      // The next walk compares with the winner's snapshot, where b.example never was.
      const next = await two.snapshots('race').openSeries('filters', '2026-12-01T00:00:00Z');
      expect((await next.lookup(['a.example', 'b.example'])).size).toBe(1);
      expect(next.previous?.takenAt).toBe('2026-11-01T00:00:00Z');
      await next.abandon();
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});
