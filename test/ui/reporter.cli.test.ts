/**
 * The stderr rule (src/ui/reporter.ts, README "Where output goes"), end to end: a pipe or cron gets
 * one line per kind of caveat, with its count, and nothing else; -q gets nothing; --verbose gets the
 * items behind each caveat. A contact without an address is never a malformed one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir } from '../helpers/cli.js';
import { csvRecords } from '../helpers/csv.js';
import { sandboxStats } from '../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../helpers/sandbox.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expectedEmailClass } from '../helpers/email-class.js';

const KEY = SANDBOX_KEYS.growth;
// Two domains over 1,000 contacts at one seniority (test dataset, seed 1), two invalid entries, one small domain.
const INPUT = 'savor.co.uk\nnot a domain!\nmitchelldental.net\nhttp//broken\nhappyglow.com\n';
const CONTACTS = [
  'contacts',
  '--seniority',
  'manager,staff',
  '--stale',
  'verify',
  '--verify-budget',
  '2',
  '--max-age',
  '30d',
  '--no-cache',
  '--format',
  'csv',
];

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

/** The first run is spawned, to show a process's stderr to a pipe; the rest run main() in process, with pipes for stdout and stderr as well. */
const prospect = (args: string[], input = '') => runCli(args, { url: sandbox.url, apiKey: KEY, input });
const inProcess = (args: string[], input = '') => runInProcess(args, { url: sandbox.url, apiKey: KEY, input });
const lines = (text: string) => text.split('\n').filter(Boolean);

const HEADROOM = { timeout: 90_000 };
// 3-8 s a case on a busy machine; they ran into the default 30 s with a second suite beside them.
describe('what stderr says in a pipe, with -q and with --verbose (against the sandbox)', HEADROOM, () => {
  it('a pipe gets exactly one line per kind, each with its count; -q gets nothing; --verbose the items too', async () => {
    const unitsBefore = (await sandboxStats(sandbox.url)).units.growth;
    const piped = await prospect(CONTACTS, INPUT);
    expect(piped.code, piped.stderr).toBe(0);
    // Distinct addresses: the same webmail address may be a contact of two companies.
    const unchecked = new Set(
      csvRecords(piped.stdout)
        .filter((row) => row.verification === 'unchecked')
        .map((row) => row.business_email!.toLowerCase()),
    ).size;
    expect(unchecked).toBeGreaterThan(100);
    expect(lines(piped.stderr)).toEqual([
      'warning: skipped 2 invalid domains (never sent); --verbose lists them.',
      expect.stringMatching(
        new RegExp(
          `^warning: verified 2 of [\\d,]+; ${unchecked.toLocaleString('en-US')} left unchecked \\(budget\\)$`,
        ),
      ),
      expect.stringMatching(/^warning: 2 domains have more than 1,000 contacts at one seniority/),
    ]);
    expect((await sandboxStats(sandbox.url)).units.growth - unitsBefore).toBe(2);

    const quiet = await inProcess([...CONTACTS, '-q'], INPUT);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
    expect(quiet.stdout).toBe(piped.stdout);

    const verbose = await inProcess([...CONTACTS, '--verbose'], INPUT);
    expect(verbose.stdout).toBe(piped.stdout);
    expect(verbose.stderr).toMatch(/^ {2}line 2: "not a domain!" is not a domain/m);
    expect(verbose.stderr).toMatch(/^ {2}line 4: "http\/\/broken" is not a domain/m);
    expect(verbose.stderr).toMatch(/^ {2}savor\.co\.uk\n {2}mitchelldental\.net$/m);
    // The summary line is a detail: a terminal's or --verbose's, never a pipe's.
    expect(verbose.stderr).toMatch(/contacts from 3\/3 domains in \d+ calls/);
  });

  it('a deliberate --max is no warning: nothing in a pipe (cron mails nothing), a summary line with --verbose', async () => {
    const piped = await inProcess(['companies', '-t', 'Shopify', '--max', '5']);
    expect(piped.code).toBe(0);
    expect(lines(piped.stdout)).toHaveLength(6);
    expect(piped.stderr).toBe('');
    const verbose = await inProcess(['companies', '-t', 'Shopify', '--max', '5', '--verbose']);
    expect(verbose.stderr).toMatch(/^Stopped at --max 5\b/m);
    expect(verbose.stderr).not.toMatch(/warning: .*--max/);
  });

  it('a contact without an email is never malformed: empty verification, freshness none, no line on stderr', async () => {
    const people = await inProcess(['contacts', 'savor.co.uk', '--seniority', 'cxo', '--format', 'csv']);
    const rows = csvRecords(people.stdout);
    const blank = rows.filter((row) => row.business_email === '');
    expect(blank.length).toBeGreaterThan(3);
    expect(blank.every((row) => row.email_freshness === 'none' && row.verification === '')).toBe(true);

    const dir = await scratchDir();
    const file = join(dir, 'people.csv');
    await writeFile(file, people.stdout);
    const addresses = rows.length - blank.length;
    const verified = await inProcess([
      'verify',
      '--file',
      file,
      '--budget',
      String(addresses),
      '--no-cache',
      '--format',
      'csv',
    ]);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stderr).toBe('');
    const out = csvRecords(verified.stdout);
    expect(out).toHaveLength(rows.length);
    for (const row of out) {
      if (row.business_email === '') expect(row.verification, row.full_name).toBe('');
      // A disposable address is never paid for: its verification stays empty.
      else if (expectedEmailClass(row.business_email, row.domain) === 'disposable')
        expect(row.verification, row.full_name).toBe('');
      else expect(row.verification, row.full_name).toMatch(/^(valid|invalid|risky|unknown)$/);
    }
  });
});
