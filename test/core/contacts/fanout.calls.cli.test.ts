/**
 * What the contacts fan-out costs (issue 28), end to end: `prospect contacts` at default flags against
 * the sandbox, its calls against the fewest the service allows, max(⌈domains / 100⌉, ⌈contacts /
 * 1,000⌉) (spec §4.2, §8), and the contact rows the service built against those written. Calls and
 * rows are the sandbox's own counters (/_sandbox/stats); domains and contacts come from the sandbox's
 * data (its dataset, or single-domain calls of the independent client), never from prospect.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir } from '../../helpers/cli.js';
import { call, everyContactOfDomain, qs, sandboxStats } from '../../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, TEST_AS_OF, testDataset, type RunningSandbox } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
/** The service's largest answer (spec §8): a domain with more at one seniority is written with its first 1,000. */
const MOST_PER_CALL = 1000;

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

/** The first `max` companies of a set, paged by the independent client: their distinct domains. */
async function domainsOf(filters: Record<string, string>, max: number): Promise<string[]> {
  const rows: any[] = [];
  let cursor: string | undefined;
  do {
    const page = await call(sandbox.url, `/api/v1/companies?${qs({ ...filters, limit: 1000, cursor })}`, { key: KEY });
    expect(page.status).toBe(200);
    rows.push(...page.body.data);
    cursor = page.body.next_cursor || undefined;
  } while (cursor !== undefined && rows.length < max);
  return [...new Set(rows.slice(0, max).map((row) => String(row.domain).toLowerCase()))];
}

/** Contacts a complete run writes for a domain, from the sandbox's dataset: all of them, at most 1,000 a seniority. */
function contactsWritten(domain: string): number {
  const dataset = testDataset();
  const index = dataset.companyIndex(domain);
  if (index === undefined) return 0;
  const bySeniority = new Map<string, number>();
  for (const contact of dataset.contactsOf(index, TEST_AS_OF))
    bySeniority.set(contact.seniority, (bySeniority.get(contact.seniority) ?? 0) + 1);
  return [...bySeniority.values()].reduce((sum, count) => sum + Math.min(count, MOST_PER_CALL), 0);
}

function fewestCalls(domains: number, contacts: number): number {
  return Math.max(Math.ceil(domains / 100), Math.ceil(contacts / MOST_PER_CALL));
}

/**
 * One `prospect contacts` run and what it cost. `--concurrency 1`: each call is sized after the answer
 * before it, so the calls and rows are the same every run. At the default concurrency they depend on
 * which concurrent call answers first (27 to 32 calls for the Shopify set below, on a loaded machine
 * more): a bound on them would fail on a slow day. BENCHMARKS.md section 3 measures the default.
 * The first test spawns the binary; the others run the same main() in process (runInProcess, the
 * same environment, exit code and key-leak checks): what they pin is the calls the sandbox counted.
 */
async function contactsRun(domains: string[], flags: string[] = [], runner = runInProcess) {
  const dir = await scratchDir();
  const before = await sandboxStats(sandbox.url);
  const run = await runner(
    ['contacts', '--concurrency', '1', ...flags, '--format', 'ndjson', '--summary', join(dir, 'summary.json')],
    {
      url: sandbox.url,
      apiKey: KEY,
      input: `${domains.join('\n')}\n`,
    },
  );
  const after = await sandboxStats(sandbox.url);
  expect(run.code, run.stderr).toBe(0);
  const rows = run.stdout
    .trimEnd()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
  return {
    rows,
    summary,
    calls: after.requests.contacts - before.requests.contacts,
    built: after.rows.contacts - before.rows.contacts,
  };
}

function countByDomain(rows: any[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.domain, (counts.get(row.domain) ?? 0) + 1);
  return counts;
}

/**
 * `contacts` over the first `max` companies of a set: each domain gets what the dataset says it has,
 * and the run states its own cost. `shape`: the set's domains, contacts written and fewest calls.
 */
async function countedAgainstDataset(filters: Record<string, string>, max: number, shape: number[]) {
  const domains = await domainsOf(filters, max);
  const expected = new Map(domains.map((domain) => [domain, contactsWritten(domain)]));
  const written = [...expected.values()].reduce((sum, count) => sum + count, 0);
  const floor = fewestCalls(domains.length, written);
  expect([domains.length, written, floor]).toEqual(shape);
  const { rows, summary, calls, built } = await contactsRun(domains);
  const got = countByDomain(rows);
  for (const domain of domains) expect(got.get(domain) ?? 0, domain).toBe(expected.get(domain));
  expect([summary.calls, summary.rows_received]).toEqual([calls, built]);
  return { summary, calls, built, written, floor };
}

const identity = (contact: any) => `${contact.seniority} ${contact.full_name} <${contact.business_email ?? ''}>`;

const HEADROOM = { timeout: 90_000 };
// 3-8 s a case on a busy machine; they ran into the default 30 s with a second suite beside them.
describe('contacts one call at a time: calls against the fewest the service allows (sandbox)', HEADROOM, () => {
  // Issue 28's targets are 1.5 times the fewest calls and 1.3 rows built per row written (at default
  // flags: `npm run bench`, BENCHMARKS.md section 3). Before issue 28 these sets took 278, 331 and 1,176 calls.
  it('-t Shopify --country us: every contact in order; calls and rows built against the fewest', async () => {
    const domains = await domainsOf({ technology: 'Shopify', country: 'united states' }, 600);
    const expected = new Map<string, any[]>();
    for (const domain of domains) expected.set(domain, (await everyContactOfDomain(sandbox.url, KEY, domain)).contacts);
    const written = [...expected.values()].reduce((sum, contacts) => sum + contacts.length, 0);
    // The set the issue measured: 300 domains and 20,033 contacts, heavy-tailed (one domain has 1,705).
    expect([domains.length, written]).toEqual([300, 20_033]);
    expect(domains.reduce((sum, domain) => sum + contactsWritten(domain), 0)).toBe(written);

    const { rows, summary, calls, built } = await contactsRun(domains, [], runCli);
    // The output is what single-domain calls give, domain by domain, in input order.
    const got = new Map<string, any[]>();
    for (const row of rows) got.set(row.domain, [...(got.get(row.domain) ?? []), row]);
    for (const domain of domains)
      expect((got.get(domain) ?? []).map(identity), domain).toEqual(expected.get(domain)!.map(identity));
    expect([...got.keys()]).toEqual(domains.filter((domain) => expected.get(domain)!.length > 0));

    const floor = fewestCalls(domains.length, written);
    expect(floor).toBe(21);
    // 29 calls and 1.11 rows built per row written, every run (27 to 32 and 1.09 to 1.28 at the default
    // concurrency); the target is 1.5 times the fewest calls.
    expect(calls).toBeLessThanOrEqual(1.5 * floor);
    expect(built).toBeLessThanOrEqual(1.3 * written);
    // The run says what it cost: the sandbox's own counts.
    expect([summary.calls, summary.rows_received, summary.rows]).toEqual([calls, built, written]);
  });

  it('-t WordPress --max 1000: every contact (one domain cut at 1,000 a seniority); calls and rows', async () => {
    // 1,000 domains, as many calls by domains as by contacts. At 2,000 domains (18,976 contacts) it was 34
    // calls (34 to 36 at the default concurrency; the 1.5 times target is missed on this set: BENCHMARKS.md
    // section 3 says why) and 1.09 rows built per row written.
    const run = await countedAgainstDataset({ technology: 'WordPress' }, 1000, [1000, 9_230, 10]);
    expect(run.summary.domains.truncated_at_limit).toHaveLength(1);
    // 17 calls, 1.07 rows built per row written.
    expect(run.calls).toBeLessThanOrEqual(1.8 * run.floor);
    expect(run.built).toBeLessThanOrEqual(1.2 * run.written);
  });

  it('-t jQuery --employee-range 11-500 --max 700: every contact; calls and rows against the fewest', async () => {
    // A set whose fewest calls are set by its contacts (31 a domain), not its domains.
    const run = await countedAgainstDataset({ technology: 'jQuery', employee_range: '11-500' }, 700, [700, 22_013, 23]);
    // 32 calls and 1.14 rows built per row written (at 2,000 domains and 57,449 contacts: 80 calls, 74 to 79 at
    // the default concurrency, and 1.12).
    expect(run.calls).toBeLessThanOrEqual(1.45 * run.floor);
    expect(run.built).toBeLessThanOrEqual(1.15 * run.written);
  });

  it('--seniority manager,staff on a dense set: first calls sized by what the first answer showed', async () => {
    const domains = await domainsOf({ technology: 'Shopify', country: 'united states' }, 600);
    const { rows, calls, built } = await contactsRun(domains, ['--seniority', 'manager,staff']);
    const written = domains.reduce((sum, domain) => {
      const contacts = testDataset().contactsOf(testDataset().companyIndex(domain)!, TEST_AS_OF);
      return sum + contacts.filter((contact) => ['manager', 'staff'].includes(contact.seniority)).length;
    }, 0);
    expect([rows.length, fewestCalls(domains.length, written)]).toEqual([14_965, 15]);
    // 100 of these domains hold about 2,000 managers: a first call of 100 is cut in its first seniority and
    // proves nothing, so the next ones are sized by it: 30 calls, 1.33 rows built per row written (31 and 1.40
    // to 1.47 at the default concurrency; 23 to 34 and 1.2 to 1.6 in a simulation with answers out of order); 40
    // with every first call at 100.
    expect(calls).toBeLessThanOrEqual(2.3 * 15);
    expect(built).toBeLessThanOrEqual(1.65 * rows.length);
  });

  it('--seniority cxo,vp asks only those, and the rows built are the rows written', async () => {
    const domains = await domainsOf({ technology: 'Shopify', country: 'united states' }, 600);
    const { rows, calls, built } = await contactsRun(domains, ['--seniority', 'cxo,vp']);
    expect(new Set(rows.map((row) => row.seniority))).toEqual(new Set(['cxo', 'vp']));
    expect(calls).toBeLessThanOrEqual(1.5 * fewestCalls(domains.length, rows.length));
    expect(built).toBeLessThanOrEqual(1.3 * rows.length);
  });
});
