/**
 * Issue 45: `companies --state S --changes` against two crawls (the sandbox's, then a month of
 * adoption and churn laid over it by test/helpers/crawl-stub.ts). The expected diff is computed here
 * from the two listings an independent client fetched, never by prospect.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishCli, runInProcess, scratchDir, startCli } from '../../helpers/cli.js';
import { csvRecords } from '../../helpers/csv.js';
import {
  diffListings,
  startCrawlStub,
  type CrawlStub,
  byDomain,
  changesInCsv,
  type ExpectedChange,
} from '../../helpers/crawl-stub.js';
import { allCompanies } from '../../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
/** Shopify stores that run Klaviyo: a crawl's churn moves companies in and out of the set as well as changing stacks. */
const FILTERS = ['-t', 'Shopify', '-t', 'Klaviyo'];
const ISO_SECOND = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

let sandbox: RunningSandbox;
let stub: CrawlStub;
let before: any[];
let after: any[];
/** The second crawl's Shopify listing in its order, before the Klaviyo filter. */
let afterListing: any[];
let expected: ExpectedChange[];

const withKlaviyo = (rows: any[]) => rows.filter((row) => row.technologies.some((entry: any) => entry.t === 'Klaviyo'));

beforeAll(async () => {
  sandbox = await startTestSandbox({ seed: 7, companies: 20_000, recordTraffic: true });
  stub = await startCrawlStub(sandbox.url);
  before = withKlaviyo(await allCompanies(stub.url, KEY, { technology: 'Shopify' }));
  stub.nextMonth = true;
  afterListing = await allCompanies(stub.url, KEY, { technology: 'Shopify' });
  after = withKlaviyo(afterListing);
  stub.nextMonth = false;
  expected = diffListings(before, after);
});
afterAll(async () => {
  await stub?.close();
  await sandbox?.close();
});

const prospect = (args: string[]) => runInProcess(args, { url: stub.url, apiKey: KEY });

/** Snapshot dates are to the second: the next run starts in a later second, so its dates differ. */
const nextSecond = () => new Promise((resolve) => setTimeout(resolve, 1100 - (Date.now() % 1000)));

/** A first listing on a new state: the first crawl. */
async function firstListing(state: string): Promise<void> {
  stub.nextMonth = false;
  const first = await prospect(['companies', ...FILTERS, '--state', state, '-o', join(state, '..', 'first.csv')]);
  expect(first.code, first.stderr).toBe(0);
  await nextSecond();
  stub.nextMonth = true;
}

/**
 * A second run (pages of 50) on a state holding the first listing, spawned, once 12 pages are
 * answered and the next is held: the run to stop. `args` run it again to its end.
 */
async function secondRunAtPage12(name: string) {
  const home = await scratchDir(name);
  const state = join(home, 'S');
  await firstListing(state);
  const args = ['--page-size', '50', 'companies', ...FILTERS, '--state', state, '--changes'];
  stub.pages = 0;
  stub.holdAfter = 12;
  const child = startCli([...args, '-o', join(home, 'stopped.csv')], { url: stub.url, apiKey: KEY, cwd: home });
  child.stdin!.end();
  const finished = finishCli(child, { timeoutMs: 60_000 });
  while (stub.pages < 12 && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
  return { home, state, args, child, finished };
}

describe('companies --changes (a local --state)', () => {
  it('the two crawls differ for a few percent of the companies', () => {
    const kinds = (kind: string) => expected.filter((change) => change.change === kind).length;
    for (const kind of ['new', 'changed', 'gone']) expect(kinds(kind), kind).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(before.length / 2);
  });

  it('writes exactly the diff an independent client computes from the two listings', async () => {
    const home = await scratchDir('changes-');
    const state = join(home, 'S');
    stub.nextMonth = false;
    const first = await prospect(['companies', ...FILTERS, '--state', state, '--changes', '-o', join(home, 'a.csv')]);
    expect(first.code, first.stderr).toBe(0);
    // No snapshot yet: the whole list is new, said once.
    expect(first.stderr.match(/has no complete listing of these filters yet/g)).toHaveLength(1);
    const all = csvRecords(await readFile(join(home, 'a.csv'), 'utf8'));
    expect(all.map((row) => row.domain)).toEqual(before.map((row) => row.domain));
    expect(new Set(all.map((row) => row.change))).toEqual(new Set(['new']));
    await nextSecond();

    stub.nextMonth = true;
    const out = join(home, 'changes.csv');
    const second = await prospect(['companies', ...FILTERS, '--state', state, '--changes', '-o', out]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toContain('has no complete listing');
    const text = await readFile(out, 'utf8');
    expect(changesInCsv(text)).toEqual([...expected].sort(byDomain));
    const rows = csvRecords(text);
    expect(Object.keys(rows[0]!).slice(0, 4)).toEqual([
      'change',
      'technologies_added',
      'technologies_removed',
      'domain',
    ]);
    expect(Object.keys(rows[0]!).slice(-2)).toEqual(['first_seen', 'previous_snapshot']);
    // Compared with the first snapshot: one date for every row, and the first run's for those it listed.
    const previous = new Set(rows.map((row) => row.previous_snapshot));
    expect(previous.size).toBe(1);
    const [date] = previous;
    expect(date).toMatch(ISO_SECOND);
    for (const row of rows.filter((each) => each.change !== 'new')) expect(row.first_seen).toBe(date);
    for (const row of rows.filter((each) => each.change === 'new')) expect(row.first_seen! > date!).toBe(true);
    // The gone companies carry their columns as the first crawl listed them.
    const gone = rows.find((row) => row.change === 'gone')!;
    expect(gone.company_name).toBe(before.find((row) => row.domain === gone.domain).company_name);
  });

  it('--change keeps the kinds asked for', async () => {
    const state = join(await scratchDir('changes-kinds-'), 'S');
    await firstListing(state);
    const run = await prospect(['companies', ...FILTERS, '--state', state, '--changes', '--change', 'new,gone']);
    expect(run.code, run.stderr).toBe(0);
    expect(changesInCsv(run.stdout)).toEqual(expected.filter((change) => change.change !== 'changed').sort(byDomain));
  });

  it('a --max-cut walk leaves the previous snapshot: the next diff is as if it had not happened', async () => {
    const state = join(await scratchDir('changes-max-'), 'S');
    await firstListing(state);
    const cut = await prospect(['--verbose', 'companies', ...FILTERS, '--state', state, '--max', '20']);
    expect(cut.code, cut.stderr).toBe(0);
    expect(cut.stderr).toContain('keeps its last complete snapshot');
    const run = await prospect(['companies', ...FILTERS, '--state', state, '--changes']);
    expect(run.code, run.stderr).toBe(0);
    expect(changesInCsv(run.stdout)).toEqual([...expected].sort(byDomain));
  });

  it('a second run SIGKILLed mid-walk, then run again, gives the same diff', async () => {
    // Killed after 12 pages, each committed to its pending snapshot as it came.
    const { home, state, args, child, finished } = await secondRunAtPage12('changes-kill-');
    // The pages answered are in the pending snapshot once the next request is held; then the kill.
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.kill('SIGKILL');
    expect((await finished).signal).toBe('SIGKILL');
    stub.holdAfter = Infinity;
    // It died with its pending snapshot written part-way (read here by SQL, not through prospect).
    const db = new Database(join(state, 'snapshots.sqlite'), { readonly: true });
    const { id } = db.prepare("SELECT id FROM snapshots WHERE status = 'pending'").get() as { id: string };
    const pending = db.prepare(`SELECT count(*) AS n FROM "listed ${id}"`).get() as { n: number };
    db.close();
    // Each page is committed as it is written (a resumed pipeline's checkpoint counts on it): all 11
    // pages before the last answered, at least.
    expect(pending.n).toBeGreaterThanOrEqual(withKlaviyo(afterListing.slice(0, 11 * 50)).length);
    expect(pending.n).toBeLessThanOrEqual(withKlaviyo(afterListing.slice(0, 12 * 50)).length);
    expect(existsSync(join(home, 'stopped.csv'))).toBe(false);
    const again = await prospect([...args, '-o', join(home, 'changes.csv')]);
    expect(again.code, again.stderr).toBe(0);
    expect(changesInCsv(await readFile(join(home, 'changes.csv'), 'utf8'))).toEqual([...expected].sort(byDomain));
  });

  it('a second run stopped by SIGTERM mid-walk: exit 143, its pending snapshot dropped through the diff thread', async () => {
    const { home, state, args, child, finished } = await secondRunAtPage12('changes-term-');
    child.kill('SIGTERM');
    const stopped = await finished;
    stub.holdAfter = Infinity;
    expect(stopped.code, stopped.stderr).toBe(143);
    expect(stopped.stderr).toMatch(/interrupted by SIGTERM/);
    expect(existsSync(join(home, 'stopped.csv'))).toBe(false);
    // The thread abandoned the pending snapshot before the process ended: only the first listing is left.
    const db = new Database(join(state, 'snapshots.sqlite'), { readonly: true });
    expect(db.prepare('SELECT status FROM snapshots').pluck().all()).toEqual(['complete']);
    db.close();
    const again = await prospect([...args, '-o', join(home, 'changes.csv')]);
    expect(again.code, again.stderr).toBe(0);
    expect(changesInCsv(await readFile(join(home, 'changes.csv'), 'utf8'))).toEqual([...expected].sort(byDomain));
  });

  it('pipeline --changes --change new asks contacts for the new companies only (counted at the sandbox)', async () => {
    const home = await scratchDir('changes-pipeline-');
    const state = join(home, 'S');
    await firstListing(state);
    // This file's one contacts call: the sandbox's list of domains asked is this run's alone.
    expect(sandbox.stats().contacts_domains).toEqual([]);
    const out = join(home, 'leads.csv');
    const run = await prospect(['pipeline', ...FILTERS, '--changes', '--change', 'new', '--state', state, '-o', out]);
    expect(run.code, run.stderr).toBe(0);
    const fresh = expected.filter((change) => change.change === 'new').map((change) => change.domain);
    expect(sandbox.stats().contacts_domains).toEqual([...fresh].sort());
    const leads = new Set(csvRecords(await readFile(out, 'utf8')).map((row) => row.domain));
    expect(leads.size).toBeGreaterThan(0);
    for (const domain of leads) expect(fresh).toContain(domain);
    // Its listing is the state's snapshot now: the same crawl again has nothing new.
    const again = await prospect(['companies', ...FILTERS, '--changes', '--state', state]);
    expect(again.code, again.stderr).toBe(0);
    expect(csvRecords(again.stdout)).toEqual([]);
  });

  it('NDJSON: each technology entry carries the dates this state observed it', async () => {
    const state = join(await scratchDir('changes-observed-'), 'S');
    stub.nextMonth = false;
    const first = await prospect(['companies', ...FILTERS, '--state', state, '--format', 'ndjson']);
    expect(first.code, first.stderr).toBe(0);
    const firstDate = JSON.parse(first.stdout.split('\n')[0]!).technologies[0].observed_first_seen as string;
    await nextSecond();
    stub.nextMonth = true;
    const run = await prospect(['companies', ...FILTERS, '--state', state, '--changes', '--format', 'ndjson']);
    expect(run.code, run.stderr).toBe(0);
    const rows = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    const changed = rows.filter((row) => row.change === 'changed');
    expect(changed.length).toBeGreaterThan(0);
    for (const row of changed) {
      const added = new Set(row.technologies_added);
      for (const entry of row.technologies) {
        // Added this crawl: first seen now; the rest: first seen by the first listing. Last seen: now.
        expect(entry.observed_first_seen === firstDate, `${row.domain} ${entry.t}`).toBe(!added.has(entry.t));
        expect(entry.observed_last_seen > firstDate).toBe(true);
      }
    }
  });

  it('count --by change: the kinds and the technologies most added and removed, and no snapshot kept', async () => {
    const state = join(await scratchDir('changes-count-'), 'S');
    await firstListing(state);
    const run = await prospect([
      'count',
      ...FILTERS,
      '--by',
      'change',
      '--state',
      state,
      '--top',
      '0',
      '--format',
      'csv',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const counted = csvRecords(run.stdout).map((row) => [row.measure, row.value, Number(row.companies)]);
    const tally = (pick: (change: ExpectedChange) => string[]) => {
      const counts = new Map<string, number>();
      for (const change of expected) for (const name of pick(change)) counts.set(name, (counts.get(name) ?? 0) + 1);
      return [...counts].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
    };
    const kinds = ['new', 'changed', 'gone'].map((kind) => [
      'change',
      kind,
      expected.filter((change) => change.change === kind).length,
    ]);
    expect(counted).toEqual([
      ...kinds,
      ...tally((change) => change.added).map(([name, n]) => ['added', name, n]),
      ...tally((change) => change.removed).map(([name, n]) => ['removed', name, n]),
    ]);
    // Counted before any export: the next --changes still compares with the first listing.
    const next = await prospect(['companies', ...FILTERS, '--state', state, '--changes']);
    expect(changesInCsv(next.stdout)).toEqual([...expected].sort(byDomain));
  });

  it('refuses --changes without --state, and with --max (exit 2, nothing asked)', async () => {
    const noState = await prospect(['companies', ...FILTERS, '--changes']);
    expect(noState.code).toBe(2);
    expect(noState.stderr).toContain('--changes compares with the snapshots kept in --state');
    const withMax = await prospect(['companies', ...FILTERS, '--changes', '--state', 'S', '--max', '5']);
    expect(withMax.code).toBe(2);
    const badKind = await prospect(['companies', ...FILTERS, '--changes', '--state', 'S', '--change', 'added']);
    expect(badKind.code).toBe(2);
    expect(badKind.stderr).toContain('"added" is not a kind');
  });
});
