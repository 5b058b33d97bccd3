/**
 * The row filters of `contacts` and `pipeline` end to end (issue 36): --deliverable-only writes only
 * rows a rep can send to and counts each kind it left out; --department and --title filter after
 * the calls, which are the same calls as without them; `contacts --max N` writes N rows and stops
 * calling. Calls are the sandbox's own counters. Expected rows come from the independent client
 * (test/helpers/independent-client.ts): the leads and contacts of each domain, and the verdict of each
 * address prospect paid for, asked of the sandbox again; the test's own rule decides which are kept.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir } from '../../helpers/cli.js';
import { csvRecords, ndjsonRecords } from '../../helpers/csv.js';
import { call, contactsOfDomain, qs, sandboxStats } from '../../helpers/independent-client.js';
import { expectedEmailClass } from '../../helpers/email-class.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

/** Why a row is not deliverable, written here apart from src: null for a row a rep can send to. */
function expectedKind(row: any): string | null {
  if (!row.business_email) return 'no_email';
  const emailClass = expectedEmailClass(row.business_email, row.domain);
  if (emailClass === 'role' || emailClass === 'disposable') return emailClass;
  if (row.verification === 'valid') return null;
  if (['invalid', 'risky', 'unknown'].includes(row.verification)) return row.verification;
  return row.email_freshness === 'fresh' ? null : 'stale_unverified';
}

const PIPELINE = ['pipeline', '-t', 'Shopify', '--country', 'US', '--max', '5', '-s', 'cxo'];

describe('--deliverable-only', () => {
  it('pipeline --stale verify --deliverable-only --preset hubspot -o hs.csv: only sendable rows, each kind counted', async () => {
    const dir = await scratchDir();
    const env = { PROSPECT_CACHE_DIR: join(dir, 'cache') };
    const paid = ['--stale', 'verify', '--verify-budget', '30'];
    const run = await runCli(
      [...PIPELINE, ...paid, '--deliverable-only', '--preset', 'hubspot', '-o', 'hs.csv', '--summary', 's.json', '-v'],
      { url: sandbox.url, apiKey: KEY, cwd: dir, env },
    );
    expect(run.code, run.stderr).toBe(0);
    const written = csvRecords(await readFile(join(dir, 'hs.csv'), 'utf8'));
    expect(written.length).toBeGreaterThan(0);
    expect(written.every((row) => row['Email'] !== '')).toBe(true);

    // The same leads without the filter, their verdicts from the cache the first run filled (in process: set-up).
    const all = await runInProcess([...PIPELINE, ...paid, '--format', 'ndjson'], {
      url: sandbox.url,
      apiKey: KEY,
      env,
    });
    expect(all.code, all.stderr).toBe(0);
    const rows = ndjsonRecords(all.stdout);
    // The leads are the independent client's: the first 5 US Shopify companies, their C-level contacts.
    const companies = await call(
      sandbox.url,
      `/api/v1/companies?${qs({ technology: 'Shopify', country: 'united states', limit: 5 })}`,
      {
        key: KEY,
      },
    );
    const leads = [];
    for (const { domain } of companies.body.data as Array<{ domain: string }>)
      leads.push(...(await contactsOfDomain(sandbox.url, KEY, domain, 'cxo')));
    expect(rows.map((row) => `${row.domain} ${row.business_email}`)).toEqual(
      leads.map((lead) => `${lead.domain} ${lead.business_email}`),
    );
    // Each verdict prospect wrote is the one the sandbox gives that address, asked again apart from prospect.
    for (const row of rows.filter((each) => each.verified_at !== null)) {
      const verdict = await call(sandbox.url, `/api/v1/verify?${qs({ email: row.business_email })}`, { key: KEY });
      expect(verdict.body.data.status, row.business_email).toBe(row.verification);
    }
    const kept = rows.filter((row) => expectedKind(row) === null);
    expect(written.map((row) => row['Email'])).toEqual(kept.map((row) => row.business_email));
    const dropped: Record<string, number> = {
      no_email: 0,
      role: 0,
      disposable: 0,
      invalid: 0,
      risky: 0,
      unknown: 0,
      stale_unverified: 0,
    };
    for (const row of rows) {
      const kind = expectedKind(row);
      if (kind !== null) dropped[kind]! += 1;
    }
    // The set holds rows of several kinds to drop, or the test would show nothing.
    expect(dropped['no_email']).toBeGreaterThan(0);
    expect(dropped['invalid']! + dropped['risky']! + dropped['unknown']!).toBeGreaterThan(0);

    const summary = JSON.parse(await readFile(join(dir, 's.json'), 'utf8'));
    expect(summary.contacts.undeliverable).toEqual(dropped);
    expect(summary.rows).toBe(written.length);
    expect(summary.parameters.deliverable_only).toBe(true);
    expect(run.stderr).toContain(
      `Left out by --deliverable-only: no email ${dropped['no_email']}, role ${dropped['role']}, ` +
        `disposable ${dropped['disposable']}, invalid ${dropped['invalid']}, ` +
        `risky ${dropped['risky']}, unknown ${dropped['unknown']}, stale unverified ${dropped['stale_unverified']}`,
    );
  }, 120_000);

  it('without verification, stale rows are left out as stale_unverified (contacts, in process)', async () => {
    const domains = ['meadowfitness.com', 'harborsupply.com'];
    // A cutoff date, not a duration: fresh is "seen on or after it", with no clock in the test.
    const CUTOFF = '2025-03-01';
    const kept = await runInProcess(['contacts', '--max-age', CUTOFF, '--format', 'ndjson', '--deliverable-only'], {
      url: sandbox.url,
      apiKey: KEY,
      input: `${domains.join('\n')}\n`,
    });
    expect(kept.code, kept.stderr).toBe(0);
    // The same domains' contacts from the independent client, kept by the rule written here.
    const contacts = [];
    for (const domain of domains) contacts.push(...(await contactsOfDomain(sandbox.url, KEY, domain)));
    const seen = (contact: any): string | null => contact.business_email_last_seen ?? null;
    const fresh = contacts.filter((c) => c.business_email && seen(c) !== null && seen(c)! >= CUTOFF);
    expect(contacts.some((c) => c.business_email && seen(c) !== null && seen(c)! < CUTOFF)).toBe(true);
    expect(fresh.length).toBeGreaterThan(0);
    const identity = (row: any) => `${row.domain} ${row.business_email}`;
    expect(ndjsonRecords(kept.stdout).map(identity)).toEqual(fresh.map(identity));
    expect(ndjsonRecords(kept.stdout).every((row) => row.email_freshness === 'fresh')).toBe(true);
  });
});

describe('--department and --title: filtered after the calls', () => {
  it('keeps the matching rows (any case), with the calls of a run without them', async () => {
    const domains = ['meadowfitness.com', 'cernypartners.cz', 'eastloom.com'];
    const input = `${domains.join('\n')}\n`;
    const before = await sandboxStats(sandbox.url);
    // The run without the filters (in process) only counts the calls.
    await runInProcess(['contacts', '--format', 'ndjson'], { url: sandbox.url, apiKey: KEY, input });
    const middle = await sandboxStats(sandbox.url);
    const some = await runCli(
      ['contacts', '--format', 'ndjson', '--department', 'SALES,Marketing', '--title', 'head OF,director'],
      { url: sandbox.url, apiKey: KEY, input },
    );
    const after = await sandboxStats(sandbox.url);
    expect(some.code, some.stderr).toBe(0);
    const contacts = [];
    for (const domain of domains) contacts.push(...(await contactsOfDomain(sandbox.url, KEY, domain)));
    const expected = contacts.filter(
      (row) =>
        ['sales', 'marketing'].includes(String(row.department).toLowerCase()) &&
        /head of|director/i.test(String(row.title)),
    );
    expect(expected.length).toBeGreaterThan(0);
    const identity = (row: any) => `${row.domain} ${row.full_name} ${row.business_email}`;
    expect(ndjsonRecords(some.stdout).map(identity)).toEqual(expected.map(identity));
    expect(after.requests.contacts - middle.requests.contacts).toBe(
      middle.requests.contacts - before.requests.contacts,
    );
  });

  it('the help says they filter after the calls', async () => {
    const help = await runInProcess(['contacts', '--help']);
    expect(help.stdout.replace(/\s+/g, ' ')).toMatch(/--department <list>.*filtered after the calls/);
    expect(help.stdout.replace(/\s+/g, ' ')).toMatch(/--title <words>.*filtered after the calls/);
  });
});

describe('contacts --max', () => {
  it('writes exactly 50 rows, with no more calls than a run of the domains those rows needed', async () => {
    const companies = await runInProcess(['companies', '-t', 'Shopify', '--max', '300', '--columns', 'domain'], {
      url: sandbox.url,
      apiKey: KEY,
    });
    const domains = companies.stdout.split('\n').slice(1).filter(Boolean);
    const dir = await scratchDir();
    const before = await sandboxStats(sandbox.url);
    const run = await runCli(['contacts', '--max', '50', '--format', 'csv', '--summary', join(dir, 's.json')], {
      url: sandbox.url,
      apiKey: KEY,
      input: `${domains.join('\n')}\n`,
    });
    const after = await sandboxStats(sandbox.url);
    expect(run.code, run.stderr).toBe(0);
    const rows = csvRecords(run.stdout);
    expect(rows).toHaveLength(50);
    // The rows need the domains up to the last one written, in input order: a run of those alone is the reference.
    const needed = domains.slice(0, domains.indexOf(rows.at(-1)!.domain!) + 1);
    const reference = await runInProcess(['contacts', '--format', 'csv'], {
      url: sandbox.url,
      apiKey: KEY,
      input: `${needed.join('\n')}\n`,
    });
    const last = await sandboxStats(sandbox.url);
    expect(csvRecords(reference.stdout).slice(0, 50)).toEqual(rows);
    expect(after.requests.contacts - before.requests.contacts).toBeLessThanOrEqual(
      last.requests.contacts - after.requests.contacts,
    );
    // Deliberate: in the record, and no warning for cron.
    const summary = JSON.parse(await readFile(join(dir, 's.json'), 'utf8'));
    expect(summary).toMatchObject({ rows: 50, stopped_at_max: true, parameters: { max: 50 } });
    expect(run.stderr).toBe('');
  }, 60_000);

  it('--limit is called a page size in the help, and --max the total', async () => {
    const help = (await runInProcess(['contacts', '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toMatch(/--limit <n> page size/);
    expect(help).toMatch(/--max <n> write at most N rows in all/);
  });
});
