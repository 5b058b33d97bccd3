import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishCli, runCli, runInProcess, scratchDir, startCli } from '../helpers/cli.js';
import { csvRecords } from '../helpers/csv.js';
import { contactsOfDomain, sandboxStats } from '../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, todayUtc, type RunningSandbox } from '../helpers/sandbox.js';

/**
 * Spawned: the runs whose stdin is a live pipe (a producer still writing, an input spooled to a
 * temporary file), which a run in process, given its input whole, cannot show. The others are the
 * rows, files, exit codes and calls of main(): the same main() in process (runInProcess, the same
 * environment and key-leak checks).
 */
const KEY = SANDBOX_KEYS.growth;
let sandbox: RunningSandbox;
let usDomainsNdjson: string;
/**
 * The first 30 of them (one call of 100 domains): for the tests about each row or each domain, not
 * about calls, order or chunks, which read all 150 (two calls).
 */
let fewDomainsNdjson: string;

beforeAll(async () => {
  // The test dataset (seed 1, 50,000 companies), which a worker builds once for every file that uses it:
  // its 150 first US Shopify stores and their contacts are what these tests read.
  sandbox = await startTestSandbox({ asOf: todayUtc() });
  // The input of the tests below, not under test here: made in process.
  const companies = await runInProcess(
    ['companies', '-t', 'Shopify', '--country', 'united states', '--max', '150', '--format', 'ndjson'],
    { url: sandbox.url, apiKey: KEY },
  );
  expect(companies.code).toBe(0);
  usDomainsNdjson = companies.stdout;
  fewDomainsNdjson = `${usDomainsNdjson.trimEnd().split('\n').slice(0, 30).join('\n')}\n`;
});
afterAll(async () => {
  await sandbox?.close();
});

function prospect(args: string[], extra: Parameters<typeof runCli>[1] = {}) {
  return runCli(args, { url: sandbox.url, apiKey: KEY, ...extra });
}
/** The same main() in process. */
function inProcess(args: string[], extra: Parameters<typeof runInProcess>[1] = {}) {
  return runInProcess(args, { url: sandbox.url, apiKey: KEY, ...extra });
}
const byDomain = (rows: Record<string, string>[]) => {
  const grouped = new Map<string, Record<string, string>[]>();
  for (const row of rows) grouped.set(row.domain!, [...(grouped.get(row.domain!) ?? []), row]);
  return grouped;
};

describe('prospect contacts (against the sandbox)', () => {
  it('gives, domain by domain, exactly what single-domain calls give: nothing lost at the limit, nothing twice', async () => {
    const run = await inProcess(['contacts', '--seniority', 'cxo,vp', '--format', 'csv', '--concurrency', '8'], {
      input: usDomainsNdjson,
    });
    expect(run.code).toBe(0);
    const got = byDomain(csvRecords(run.stdout));
    const domains = usDomainsNdjson
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line).domain as string);
    let compared = 0;
    for (const domain of domains) {
      const expected = await contactsOfDomain(sandbox.url, KEY, domain, 'cxo,vp');
      const mine = got.get(domain) ?? [];
      expect(
        mine.map((row) => row.full_name),
        domain,
      ).toEqual(expected.map((contact: any) => contact.full_name));
      expect(mine.map((row) => row.business_email || null)).toEqual(
        expected.map((contact: any) => contact.business_email),
      );
      compared += expected.length;
    }
    expect(compared).toBeGreaterThan(200);
    // Output follows input order.
    const order = [...got.keys()];
    expect(order).toEqual(domains.filter((domain) => got.has(domain)));
  });

  it('writes byte-identical output at --concurrency 1 and 8', async () => {
    const one = await inProcess(['contacts', '--concurrency', '1', '--limit', '100'], { input: usDomainsNdjson });
    const eight = await inProcess(['contacts', '--concurrency', '8', '--limit', '100'], { input: usDomainsNdjson });
    expect(one.code).toBe(0);
    expect(eight.stdout).toBe(one.stdout);
    expect(one.stdout.length).toBeGreaterThan(1000);
  });

  it('classifies every address by freshness and carries its source', async () => {
    const run = await inProcess(['contacts', '--max-age', '180d', '--format', 'ndjson'], { input: fewDomainsNdjson });
    const rows = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    const cutoff =
      Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()) - 180 * 86_400_000;
    const seen = new Set<string>();
    for (const row of rows) {
      seen.add(row.email_freshness);
      expect(row.source).toMatchObject({ dataset: expect.any(String) });
      if (!row.business_email) expect(row.email_freshness).toBe('none');
      else if (!row.business_email_last_seen) expect(row.email_freshness).toBe('unknown');
      else expect(row.email_freshness).toBe(Date.parse(row.business_email_last_seen) < cutoff ? 'stale' : 'fresh');
    }
    expect([...seen].sort()).toEqual(expect.arrayContaining(['fresh', 'none', 'stale']));
    const dropped = await inProcess(['contacts', '--max-age', '180d', '--stale', 'drop', '--format', 'ndjson'], {
      input: fewDomainsNdjson,
    });
    const kept = dropped.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(kept.every((row) => row.email_freshness !== 'stale')).toBe(true);
    expect(kept.length).toBe(rows.filter((row) => row.email_freshness !== 'stale').length);
  });

  it('--per-company keeps the most useful N of each domain: the most senior, then fresh, then the most recently confirmed', async () => {
    const run = await inProcess(['contacts', '--per-company', '2', '--max-age', '180d', '--format', 'ndjson'], {
      input: fewDomainsNdjson,
    });
    expect(run.code).toBe(0);
    const kept = byDomain(
      run.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
    );
    const rank = (contact: any) => ['cxo', 'vp', 'director', 'manager', 'staff'].indexOf(contact.seniority);
    const cutoff = new Date(Date.now() - 180 * 86_400_000).toISOString().slice(0, 10);
    const fresh = (contact: any) =>
      Boolean(contact.business_email && contact.business_email_last_seen && contact.business_email_last_seen >= cutoff);
    const seen = (contact: any) => (contact.business_email ? (contact.business_email_last_seen ?? '') : '');
    /** Whether `a` is at least as useful as `b`, by the documented order. */
    const atLeastAsUseful = (a: any, b: any) =>
      rank(a) !== rank(b) ? rank(a) < rank(b) : fresh(a) !== fresh(b) ? fresh(a) : seen(a) >= seen(b);
    let passedOver = 0;
    for (const [domain, rows] of kept) {
      const all = await contactsOfDomain(sandbox.url, KEY, domain);
      expect(rows.length).toBe(Math.min(2, all.length));
      const keptNames = new Set(rows.map((row) => row.full_name));
      for (const left of all.filter((contact: any) => !keptNames.has(contact.full_name))) {
        for (const row of rows)
          expect(atLeastAsUseful(row, left), `${domain}: ${row.full_name} kept over ${left.full_name}`).toBe(true);
      }
      // Where the service's first two are not the two kept, the old rule (first N) would have been wrong.
      if (all.slice(0, 2).some((contact: any) => !keptNames.has(contact.full_name))) passedOver += 1;
    }
    expect(passedOver).toBeGreaterThan(0);
  });

  it('reads messy input: URLs, case, www., blank lines, a CSV with a BOM and CRLF, junk', async () => {
    const domains = usDomainsNdjson
      .trimEnd()
      .split('\n')
      .slice(0, 3)
      .map((line) => JSON.parse(line).domain as string);
    const messy = `\uFEFFwebsite,name\r\nhttps://www.${domains[0]!.toUpperCase()}/about,A\r\n\r\n${domains[1]}.,B\r\nnot a domain!,C\r\nhttp://${domains[2]}:8080/x?y=1,D\r\n${domains[0]},dup\r\n`;
    const dir = await scratchDir();
    const file = join(dir, 'accounts.csv');
    await writeFile(file, messy);
    const run = await inProcess([
      'contacts',
      '--domains-file',
      file,
      '--domain-column',
      'website',
      '--format',
      'ndjson',
    ]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('warning: skipped 1 invalid domain (never sent); --verbose lists them.\n');
    // --verbose and --strict on the same file.
    const verbose = await inProcess([
      'contacts',
      '--domains-file',
      file,
      '--domain-column',
      'website',
      '--format',
      'ndjson',
      '--verbose',
    ]);
    expect(verbose.stderr).toMatch(/^ {2}line 5: "not a domain!"/m);
    const seenDomains = [
      ...new Set(
        run.stdout
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line).domain),
      ),
    ];
    const withContacts: string[] = [];
    for (const domain of domains)
      if ((await contactsOfDomain(sandbox.url, KEY, domain)).length > 0) withContacts.push(domain);
    expect(withContacts.length).toBeGreaterThan(0);
    expect(seenDomains).toEqual(withContacts);
    const strict = await inProcess(['contacts', '--domains-file', file, '--domain-column', 'website', '--strict']);
    expect(strict.code).toBe(2);
  });

  it('an empty input is a usage error, not an empty success', async () => {
    // test/commands/options.test.ts spawns an empty input.
    const run = await inProcess(['contacts'], { input: '\n\n# nothing here\n' });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
  });

  it('invalid --seniority and --limit exit 2 with zero requests, listing the valid values', async () => {
    const before = (await sandboxStats(sandbox.url)).requests.total;
    const bad = await inProcess(['contacts', 'acme.com', '--seniority', 'cxo,boss']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/cxo, vp, director, manager, staff/);
    expect((await inProcess(['contacts', 'acme.com', '--limit', '1001'])).code).toBe(2);
    expect((await inProcess(['contacts', 'acme.com', '--max-age', 'soon'])).code).toBe(2);
    expect((await inProcess(['contacts', 'acme.com', '--stale', 'maybe'])).code).toBe(2);
    expect((await sandboxStats(sandbox.url)).requests.total).toBe(before);
  });

  it('a Starter key gets one clear line, exit 4, one request, no output file', async () => {
    const dir = await scratchDir();
    const target = join(dir, 'contacts.csv');
    const before = (await sandboxStats(sandbox.url)).requests.contacts;
    const run = await runInProcess(['contacts', 'acme.com', '-o', target], {
      url: sandbox.url,
      apiKey: SANDBOX_KEYS.starter,
      cwd: dir,
    });
    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(/Growth plan/);
    expect(run.stderr.trim().split('\n').length).toBeLessThanOrEqual(2);
    expect(existsSync(target)).toBe(false);
    expect((await sandboxStats(sandbox.url)).requests.contacts - before).toBe(1);
  });
});

describe('contacts reads its input as it arrives (spawned: stdin is a live pipe)', () => {
  const contactsCalls = async () => (await sandboxStats(sandbox.url)).requests.contacts as number;

  /** Polls the sandbox until it has had a contacts call more than `before`; the time it took, or null. */
  async function firstCallAfter(before: number, timeoutMs: number): Promise<number | null> {
    const started = Date.now();
    while (Date.now() - started < timeoutMs) {
      if ((await contactsCalls()) > before) return Date.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return null;
  }

  it('asks for the first domains while the producer is still writing, and ends with its input', async () => {
    const [first, second] = usDomainsNdjson.trimEnd().split('\n');
    const before = await contactsCalls();
    const child = startCli(['contacts', '--format', 'ndjson'], { url: sandbox.url, apiKey: KEY });
    const finished = finishCli(child);
    child.stdin!.write(`${first}\n`);
    // The producer writes nothing more until the call is seen: only a streaming reader can make it.
    // No wall-clock bound here (a loaded machine starts node slowly); bench/ measures the delay.
    const waited = await firstCallAfter(before, 30_000);
    expect(waited, 'no contacts call while the input was still open').not.toBeNull();
    child.stdin!.end(`${second}\n`);
    const run = await finished;
    expect(run.code).toBe(0);
    const withContacts: string[] = [];
    for (const line of [first, second]) {
      const domain = JSON.parse(line!).domain as string;
      if ((await contactsOfDomain(sandbox.url, KEY, domain)).length > 0) withContacts.push(domain);
    }
    const written =
      run.stdout === ''
        ? []
        : [
            ...new Set(
              run.stdout
                .trimEnd()
                .split('\n')
                .map((line) => JSON.parse(line).domain as string),
            ),
          ];
    expect(written).toEqual(withContacts);
  });

  it('--strict refuses an input whose last line is invalid, before a single call', async () => {
    const before = await contactsCalls();
    const input = `${usDomainsNdjson}{"domain": "not a domain!"}\n`;
    // Standard input is spooled to a temporary file, not to memory, and the file does not outlive the run.
    const tmp = await scratchDir();
    const run = await prospect(['contacts', '--strict', '--concurrency', '8'], { input, env: { TMPDIR: tmp } });
    expect(await readdir(tmp)).toEqual([]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/1 invalid domain in the input \(--strict\):\n {2}line 151: "not a domain!"/);
    expect(run.stdout).toBe('');
    expect(await contactsCalls()).toBe(before);
  });

  it('a run that fails while its producer still writes exits at once, without waiting for the pipe to close', async () => {
    const child = startCli(['contacts'], { url: sandbox.url, apiKey: SANDBOX_KEYS.starter });
    child.stdin!.on('error', () => {});
    child.stdin!.write('acme.com\n');
    const run = await finishCli(child, { timeoutMs: 30_000 });
    expect(run.code).toBe(4);
    child.stdin!.end();
  });
});

describe('contacts --stale verify (against the sandbox)', () => {
  const units = async () => (await sandboxStats(sandbox.url)).units.growth as number;

  it('contacts --stale verify pays only for stale addresses, within --verify-budget', async () => {
    const cache = await scratchDir();
    const before = await units();
    const run = await inProcess(['contacts', '--stale', 'verify', '--verify-budget', '25', '--format', 'ndjson'], {
      input: fewDomainsNdjson,
      env: { PROSPECT_CACHE_DIR: cache },
    });
    expect(run.code).toBe(0);
    const rows = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    const checked = rows.filter((row) => row.verification && row.verification !== 'unchecked');
    expect(checked.length).toBe(25);
    expect(checked.every((row) => row.email_freshness === 'stale' || row.email_freshness === 'unknown')).toBe(true);
    expect(rows.filter((row) => row.email_freshness === 'fresh').every((row) => row.verification === null)).toBe(true);
    expect((await units()) - before).toBe(25);
  });
});
