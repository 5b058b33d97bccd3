/**
 * Issue 45 for `pipeline --state`: the listing it walked is kept as a snapshot (only once the walk is
 * complete), a later `pipeline --changes` compares with it, and each lead says what changed of its
 * company. Two monthly crawls of the sandbox (--as-of 2026-10-15 and 2026-11-15, same seed); the
 * expected diff is computed here from the two listings an independent client fetched. The SIGKILL
 * case is spawned; every other run is in process.
 */
import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishCli, runInProcess, scratchDir, startCli } from '../../helpers/cli.js';
import { csvRecords } from '../../helpers/csv.js';
import {
  changesInCsv,
  diffListings,
  nextMonthStack,
  startCrawlStub,
  startMonthlyCrawls,
  type CrawlStub,
  type ExpectedChange,
  type MonthlyCrawls,
} from '../../helpers/crawl-stub.js';
import { allCompanies } from '../../helpers/independent-client.js';
import { SANDBOX_KEYS, type TestSandbox } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
const PIPELINE = ['pipeline', '-t', 'Shopify', '--seniority', 'cxo'];

let crawls: MonthlyCrawls;
let october: TestSandbox;
let november: TestSandbox;
let before: any[];
let expected: ExpectedChange[];

beforeAll(async () => {
  crawls = await startMonthlyCrawls();
  ({ october, november, before, expected } = crawls);
});
afterAll(async () => {
  await crawls?.close();
});

const at = (sandbox: { url: string }, args: string[], cwd?: string) =>
  runInProcess(args, { url: sandbox.url, apiKey: KEY, ...(cwd ? { cwd } : {}) });

/**
 * The companies of a state's last complete snapshot, read by SQL: domain, stack digest and row, from the
 * head's own table (`listed <id>`) and its series' rows (`rows <series>`, docs/state-directory.md).
 * Every stored row is one the head names: nothing a killed walk wrote is left behind.
 */
function publishedSnapshot(state: string): string[][] {
  const db = new Database(join(state, 'snapshots.sqlite'), { readonly: true });
  try {
    const statuses = db.prepare('SELECT status FROM snapshots').pluck().all();
    expect(statuses).toEqual(['complete']);
    const { head, series } = db.prepare('SELECT snapshot_id AS head, series FROM heads').get() as {
      head: string;
      series: string;
    };
    const rows = db
      .prepare(`SELECT l.domain, l.stack, r.row FROM "listed ${head}" l JOIN "rows ${series}" r ON r.digest = l.digest`)
      .raw()
      .all() as string[][];
    expect(db.prepare(`SELECT count(*) FROM "rows ${series}"`).pluck().get()).toBe(rows.length);
    return rows.sort(([a], [b]) => (a! < b! ? -1 : 1));
  } finally {
    db.close();
  }
}

describe('pipeline --state keeps its listing, and --changes compares with it', () => {
  it('the weekly job: a plain run, then --changes asks contacts only for new and changed companies, each lead saying what changed', async () => {
    const home = await scratchDir('pipeline-changes-');
    const state = join(home, 'S');
    const first = await at(october, [...PIPELINE, '--state', state, '-o', join(home, 'october.csv')]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).not.toContain('no complete listing');
    const plain = csvRecords(await readFile(join(home, 'october.csv'), 'utf8'));
    expect(Object.keys(plain[0]!)).not.toContain('change');

    // This file's first contacts call at the November sandbox: its list of domains asked is this run's alone.
    expect(november.stats().contacts_domains).toEqual([]);
    const copy = join(home, 'S-copy');
    await cp(state, copy, { recursive: true });
    const out = join(home, 'changes.csv');
    const second = await at(november, [...PIPELINE, '--changes', '--state', state, '-o', out]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toContain('no complete listing');
    const asked = expected.filter((change) => change.change !== 'gone');
    expect(asked.length).toBeGreaterThan(0);
    expect(november.stats().contacts_domains).toEqual(asked.map((change) => change.domain));

    // Every lead carries its company's change, exactly as the independent diff has it, after the plain columns.
    const text = await readFile(out, 'utf8');
    const leads = csvRecords(text);
    expect(Object.keys(leads[0]!)).toEqual([
      ...Object.keys(plain[0]!),
      'change',
      'technologies_added',
      'technologies_removed',
    ]);
    const byCompany = new Map(changesInCsv(text).map((change) => [change.domain, change]));
    expect(byCompany.size).toBeGreaterThan(0);
    for (const [domain, change] of byCompany) expect(change).toEqual(asked.find((each) => each.domain === domain));

    // JSON: the same fields, the technologies as arrays (as companies --changes writes them).
    const json = await at(november, [...PIPELINE, '--changes', '--state', copy, '--format', 'json']);
    expect(json.code, json.stderr).toBe(0);
    const rows = JSON.parse(json.stdout).data as any[];
    expect(rows.length).toBe(leads.length);
    for (const row of rows) {
      const change = asked.find((each) => each.domain === row.domain)!;
      expect([row.change, row.technologies_added, row.technologies_removed]).toEqual([
        change.change,
        change.added,
        change.removed,
      ]);
    }
  });

  it('a --max-cut pipeline leaves the previous snapshot: the next diff is as if it had not run', async () => {
    const home = await scratchDir('pipeline-changes-max-');
    const state = join(home, 'S');
    const first = await at(october, ['companies', '-t', 'Shopify', '--state', state, '-o', join(home, 'first.csv')]);
    expect(first.code, first.stderr).toBe(0);
    const cut = await at(october, [
      '--verbose',
      'pipeline',
      '-t',
      'Shopify',
      '--max',
      '20',
      '--keep-empty',
      '--state',
      state,
    ]);
    expect(cut.code, cut.stderr).toBe(0);
    expect(cut.stderr).toContain('keeps its last complete snapshot');
    const next = await at(november, ['companies', '-t', 'Shopify', '--state', state, '--changes']);
    expect(next.code, next.stderr).toBe(0);
    expect(changesInCsv(next.stdout)).toEqual(expected);
  });

  it('a snapshot refused after the leads are written: exit 7, the leads in place, and no word of a resume', async () => {
    const home = await scratchDir('pipeline-changes-refused-');
    const state = join(home, 'S');
    // A --max-cut walk publishes nothing: it only makes the store's file, for the trigger below.
    const first = await at(october, ['companies', '-t', 'Shopify', '--max', '5', '--state', state]);
    expect(first.code, first.stderr).toBe(0);
    // The store refuses to publish (as a disk that fills at its last write does), by a trigger of its own file.
    const db = new Database(join(state, 'snapshots.sqlite'));
    db.exec("CREATE TRIGGER refuse BEFORE INSERT ON heads BEGIN SELECT RAISE(ABORT, 'refused'); END");
    db.close();
    const out = join(home, 'leads.csv');
    const run = await at(october, [...PIPELINE, '-T', 'Klaviyo', '--state', state, '-o', out]);
    expect(run.code).toBe(7);
    expect(run.stderr).toMatch(/snapshots\.sqlite.*refused/);
    expect(run.stderr).toContain('the leads are written and the run is recorded');
    expect(run.stderr).not.toContain('resume');
    expect(csvRecords(await readFile(out, 'utf8')).length).toBeGreaterThan(0);
  });

  it('a --changes run SIGKILLed mid-walk and resumed: the same leads and the same snapshot as an uninterrupted run', async () => {
    const args = ['--page-size', '50', ...PIPELINE, '--changes'];
    // The uninterrupted run, in process.
    const reference = await scratchDir('pipeline-changes-reference-');
    const clean = await at(october, [...args, '--state', join(reference, 'S'), '-o', 'leads.csv'], reference);
    expect(clean.code, clean.stderr).toBe(0);

    // Pages of 50 (21 in all): the run is killed with 10 or more pages checkpointed and 12 answered.
    const stub: CrawlStub = await startCrawlStub(october.url);
    try {
      const home = await scratchDir('pipeline-changes-kill-');
      const state = join(home, 'S');
      stub.holdAfter = 12;
      const child = startCli([...args, '--state', state, '-o', 'leads.csv'], { url: stub.url, apiKey: KEY, cwd: home });
      child.stdin!.end();
      const finished = finishCli(child, { timeoutMs: 60_000 });
      const checkpointPath = join(state, 'current', 'checkpoint.json');
      const pagesDone = async () =>
        JSON.parse((await readFile(checkpointPath, 'utf8').catch(() => '')) || '{"pages_done":0}').pages_done as number;
      for (let waited = 0; waited < 60_000 && child.exitCode === null && (await pagesDone()) < 10; waited += 20)
        await sleep(20);
      child.kill('SIGKILL');
      expect((await finished).signal).toBe('SIGKILL');
      expect(await pagesDone()).toBeGreaterThanOrEqual(10);

      stub.holdAfter = Infinity;
      const resumed = await at(stub, ['--verbose', ...args, '--state', state, '-o', 'leads.csv'], home);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain('Resuming the unfinished run');
      expect(await readFile(join(home, 'leads.csv'), 'utf8')).toBe(
        await readFile(join(reference, 'leads.csv'), 'utf8'),
      );
      const snapshot = publishedSnapshot(state);
      expect(snapshot.map(([domain]) => domain)).toEqual(before.map((row) => row.domain).sort());
      expect(snapshot).toEqual(publishedSnapshot(join(reference, 'S')));
      // And the next month's --changes compares with all of it.
      const next = await at(november, ['companies', '-t', 'Shopify', '--state', state, '--changes']);
      expect(changesInCsv(next.stdout)).toEqual(expected);
    } finally {
      await stub.close();
    }
  });

  it('a --changes run SIGKILLed and resumed counts the whole listing, not only its own part', async () => {
    const home = await scratchDir('pipeline-changes-counts-');
    const state = join(home, 'S');
    const first = await at(october, ['companies', '-t', 'Shopify', '--state', state, '-o', join(home, 'october.csv')]);
    expect(first.code, first.stderr).toBe(0);
    // November's crawl, with a fifth of the stacks changed again by the stub: most pages have a lead.
    const after = (await allCompanies(november.url, KEY, { technology: 'Shopify' })).map((row) => ({
      ...row,
      technologies: nextMonthStack(row.domain, row.technologies),
    }));
    const diff = diffListings(before, after);
    const kind = (change: string) => diff.filter((each) => each.change === change).length;
    const want = {
      new: kind('new'),
      changed: kind('changed'),
      unchanged: after.length - kind('new') - kind('changed'),
    };
    expect(Math.min(want.new, want.changed, want.unchanged)).toBeGreaterThan(0);

    const args = ['--page-size', '50', ...PIPELINE, '--changes', '--state', state, '-o', 'leads.csv'];
    const stub: CrawlStub = await startCrawlStub(november.url);
    try {
      stub.nextMonth = true;
      stub.holdAfter = 12;
      const child = startCli(args, { url: stub.url, apiKey: KEY, cwd: home });
      child.stdin!.end();
      const finished = finishCli(child, { timeoutMs: 60_000 });
      const checkpoint = async () =>
        JSON.parse((await readFile(join(state, 'current', 'checkpoint.json'), 'utf8').catch(() => '')) || '{}');
      for (let waited = 0; waited < 60_000 && child.exitCode === null && ((await checkpoint()).pages_done ?? 0) < 5;)
        waited += await sleep(20, 20);
      child.kill('SIGKILL');
      expect((await finished).signal).toBe('SIGKILL');
      // The killed part committed some of the listing's companies, not all.
      const part = (await checkpoint()).counters.changes;
      const committed = part.new + part.changed + part.unchanged;
      expect(committed).toBeGreaterThan(0);
      expect(committed).toBeLessThan(after.length);

      stub.holdAfter = Infinity;
      const resumed = await at(stub, ['--verbose', ...args, '--summary', 'summary.json'], home);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain('Resuming the unfinished run');
      expect(resumed.stderr).toContain(
        `${want.new} new, ${want.changed} changed, ${want.unchanged.toLocaleString('en-US')} unchanged;`,
      );
      const summary = JSON.parse(await readFile(join(home, 'summary.json'), 'utf8'));
      expect(summary.changes).toMatchObject(want);
    } finally {
      await stub.close();
    }
  });
});
