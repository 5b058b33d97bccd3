/**
 * Issue 45 point 7 and its must-show on a real PostgreSQL (the test cluster): `companies -t Shopify
 * --state pg:NAME` against the sandbox's October crawl, then `--changes` against November's (same
 * seed), the second run SIGKILLed midway and run again; and the weekly pipeline job on the two crawls.
 * The expected diff is computed here from the two listings an independent client fetched; the stored
 * rows are read by SQL, never through prospect.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseStateUrl } from '../../../src/config/state-url.js';
import { openPgStore } from '../../../src/core/state-store/pg/store.js';
import { finishCli, runInProcess, scratchDir, startCli } from '../../helpers/cli.js';
import { csvRecords } from '../../helpers/csv.js';
import {
  changesInCsv,
  startCrawlStub,
  startMonthlyCrawls,
  type CrawlStub,
  type ExpectedChange,
  type MonthlyCrawls,
} from '../../helpers/crawl-stub.js';
import { POSTGRES, testDatabase, TEST_TEAM_KEY, type TestDatabase } from '../../helpers/postgres.js';
import { SANDBOX_KEYS, type TestSandbox } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;

let crawls: MonthlyCrawls;
let october: TestSandbox;
let november: TestSandbox;
/** November's crawl, forwarded: it holds the companies pages after a count, for a run to be killed midway. */
let gate: CrawlStub;
let before: any[];
let expected: ExpectedChange[];

describe.skipIf(POSTGRES.skip)('companies --changes with --state pg:NAME', () => {
  let db: TestDatabase;
  const env = () => ({ PROSPECT_STATE_URL: db.url, PROSPECT_TEAM_KEY: TEST_TEAM_KEY });
  const prospect = (sandbox: { url: string }, args: string[]) =>
    runInProcess(args, { url: sandbox.url, apiKey: KEY, env: env() });

  beforeAll(async () => {
    crawls = await startMonthlyCrawls();
    ({ october, november, before, expected } = crawls);
    gate = await startCrawlStub(november.url);
    db = await testDatabase('changes');
  });
  afterAll(async () => {
    await gate?.close();
    await crawls?.close();
  });

  it('October, then November --changes SIGKILLed midway and run again: the independent diff', async () => {
    const home = await scratchDir('changes-pg-');
    const first = await prospect(october, [
      'companies',
      '-t',
      'Shopify',
      '--state',
      'pg:shops',
      '-o',
      join(home, 'oct.csv'),
    ]);
    expect(first.code, first.stderr).toBe(0);

    // What the team database holds: no domain in clear, nor its unkeyed digest.
    // This job's rows only: the file's other cases share the database, in whatever order they run.
    const stored = await db.sql(
      "SELECT c.domain_hash, c.data FROM prospect.snapshot_companies c JOIN prospect.snapshots s ON s.id = c.snapshot_id WHERE s.job = 'shops'",
    );
    expect(stored.rows).toHaveLength(before.length);
    const bytes = Buffer.concat(stored.rows.flatMap((row) => [row.domain_hash, row.data]));
    const domain = before[0].domain as string;
    expect(bytes.includes(Buffer.from(domain))).toBe(false);
    expect(bytes.includes(createHash('sha256').update(domain).digest())).toBe(false);

    // Pages of 50 (21 in all): killed with 12 answered and the next one held.
    const args = ['--page-size', '50', 'companies', '-t', 'Shopify', '--state', 'pg:shops', '--changes'];
    gate.pages = 0;
    gate.holdAfter = 12;
    const options = { url: gate.url, apiKey: KEY, cwd: home, env: env() };
    const child = startCli([...args, '-o', join(home, 'killed.csv')], options);
    child.stdin!.end();
    const finished = finishCli(child, { timeoutMs: 60_000 });
    while (gate.pages < 12 && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.kill('SIGKILL');
    expect((await finished).signal).toBe('SIGKILL');
    gate.holdAfter = Infinity;
    // It died with its pending snapshot written part-way.
    const pending = await db.sql(
      `SELECT (SELECT count(*)::int FROM prospect.snapshot_companies c WHERE c.snapshot_id = s.id) AS companies
         FROM prospect.snapshots s WHERE s.status = 'pending' AND s.job = 'shops'`,
    );
    expect(pending.rows).toHaveLength(1);
    expect(pending.rows[0].companies).toBeGreaterThan(0);

    const again = await prospect(gate, [...args, '-o', join(home, 'changes.csv')]);
    expect(again.code, again.stderr).toBe(0);
    expect(changesInCsv(await readFile(join(home, 'changes.csv'), 'utf8'))).toEqual(expected);
    for (const kind of ['new', 'changed', 'gone'])
      expect(
        expected.some((change) => change.change === kind),
        kind,
      ).toBe(true);
    // The killed run's pending snapshot is gone, the replaced one too (no walk compares with it): one left.
    const left = await db.sql("SELECT status FROM prospect.snapshots WHERE job = 'shops'");
    expect(left.rows).toEqual([{ status: 'complete' }]);
  });

  it('the weekly job on pg:weekly: a plain pipeline in October, then --changes --change new asks contacts for the new companies only', async () => {
    const home = await scratchDir('changes-pg-pipeline-');
    const pipeline = ['pipeline', '-t', 'Shopify', '--seniority', 'cxo', '--state', 'pg:weekly'];
    const first = await prospect(october, [...pipeline, '-o', join(home, 'october.csv')]);
    expect(first.code, first.stderr).toBe(0);
    // The first contacts call at the November sandbox: its list of domains asked is this run's alone.
    expect(november.stats().contacts_domains).toEqual([]);
    const out = join(home, 'leads.csv');
    // --keep-empty: a new company without a contact at cxo still has its row.
    const run = await prospect(november, [
      ...pipeline,
      ...['--changes', '--change', 'new', '--only-new', '--keep-empty', '-o', out],
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('no complete listing');
    const fresh = expected.filter((change) => change.change === 'new').map((change) => change.domain);
    expect(fresh.length).toBeGreaterThan(0);
    expect(november.stats().contacts_domains).toEqual([...fresh].sort());
    const leads = csvRecords(await readFile(out, 'utf8'));
    expect([...new Set(leads.map((lead) => lead.domain))].sort()).toEqual([...fresh].sort());
    for (const lead of leads) expect(lead.change).toBe('new');
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
