/**
 * Issue 13, points 1 and 2: every command that can spend asks first (or, off a terminal, needs a
 * cap), and no address is paid for twice, whichever command paid first. Money is measured by the
 * sandbox's unit counter (GET /_sandbox/stats), never by what prospect says it spent.
 *
 * Spawned: what only processes show (a pseudo-terminal's question, two processes on one ledger at
 * once) and one refusal off a terminal, to show the binary's exit code. The other runs are about the
 * units charged, the ledger's file and the rows written: the same main() in process (runInProcess,
 * with the same environment and key-leak checks).
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir, type CliOptions, type InProcessOptions } from '../../helpers/cli.js';
import { csvRecords } from '../../helpers/csv.js';
import { call, qs, sandboxStats } from '../../helpers/independent-client.js';
import { findProgram } from '../../helpers/programs.js';
import { SANDBOX_KEYS, startTestSandbox, todayUtc, type RunningSandbox } from '../../helpers/sandbox.js';
import { answerOnTerminal } from '../../helpers/terminal.js';

const KEY = SANDBOX_KEYS.growth;
const SCRIPT = findProgram('script');
/** The service's answers: a row with one of these in `verification` was paid for. */
import { expectedEmailClass } from '../../helpers/email-class.js';

const PAID = new Set(['valid', 'invalid', 'risky', 'unknown']);

let sandbox: RunningSandbox;
let domains: string[];

beforeAll(async () => {
  // A sandbox of today: its verified_at dates are within the default --cache-ttl of 30 days.
  sandbox = await startTestSandbox({ asOf: todayUtc() });
  const { body } = await call(
    sandbox.url,
    `/api/v1/companies?${qs({ technology: 'Shopify', country: 'united states', limit: 12 })}`,
    { key: KEY },
  );
  domains = (body.data as Array<{ domain: string }>).map((company) => company.domain);
  expect(domains).toHaveLength(12);
});
afterAll(async () => {
  await sandbox?.close();
});

const units = async (): Promise<number> => (await sandboxStats(sandbox.url)).units.growth;

function prospect(args: string[], options: CliOptions = {}) {
  return runCli(args, { url: sandbox.url, apiKey: KEY, ...options });
}
/** The same main() in process, against the same sandbox. */
function inProcess(args: string[], options: InProcessOptions = {}) {
  return runInProcess(args, { url: sandbox.url, apiKey: KEY, ...options });
}

/**
 * Distinct addresses of a CSV output that were never paid for (empty or unchecked verification), less the
 * disposable ones, which no command pays for.
 */
function neverPaid(rows: Array<Record<string, string>>): number {
  const addresses = rows
    .filter((row) => row.business_email && !PAID.has(row.verification ?? ''))
    .filter((row) => expectedEmailClass(row.business_email, row.domain) !== 'disposable')
    .map((row) => row.business_email!.toLowerCase());
  return new Set(addresses).size;
}

/** Only the address column: what verify then knows of earlier payments comes from the ledger alone. */
async function addressesOnly(rows: Array<Record<string, string>>, path: string): Promise<void> {
  await writeFile(path, `business_email\n${rows.map((row) => row.business_email).join('\n')}\n`);
}

/** `verify --file` on the addresses alone (from an earlier run's rows) pays for exactly the ones that run did not pay for. */
async function expectVerifyPaysOnlyNeverPaid(
  rows: Array<Record<string, string>>,
  dir: string,
  env: Record<string, string>,
): Promise<void> {
  const expected = neverPaid(rows);
  expect(expected).toBeGreaterThan(0);
  await addressesOnly(rows, join(dir, 'addresses.csv'));
  const before = await units();
  const verify = await inProcess(['verify', '--file', join(dir, 'addresses.csv'), '--yes', '--format', 'csv'], { env });
  expect(verify.code, verify.stderr).toBe(0);
  expect((await units()) - before).toBe(expected);
  // What was paid before comes back as it was paid, and nothing is left unchecked: no budget was set.
  const paidBefore = new Map(
    rows
      .filter((row) => row.business_email && PAID.has(row.verification ?? ''))
      .map((row) => [row.business_email!.toLowerCase(), row]),
  );
  expect(paidBefore.size).toBeGreaterThan(0);
  const answered = csvRecords(verify.stdout).filter((row) => row.business_email);
  expect(answered.length).toBeGreaterThanOrEqual(paidBefore.size + expected);
  for (const row of answered) {
    expect(row.verification, row.business_email).not.toBe('unchecked');
    const earlier = paidBefore.get(row.business_email!.toLowerCase());
    if (earlier)
      expect([row.business_email, row.verification, row.verified_at]).toEqual([
        row.business_email,
        earlier.verification,
        earlier.verified_at,
      ]);
  }
  expect(verify.stderr).not.toMatch(/budget|unchecked/);
}

describe('off a terminal, a run that would pay needs a cap', () => {
  const commands = [
    { name: 'verify', args: (out: string) => ['verify', 'ana@example.com', 'bob@example.com', '-o', out] },
    {
      name: 'contacts --stale verify',
      args: (out: string) => ['contacts', ...domains.slice(0, 3), '--stale', 'verify', '-o', out],
    },
    {
      name: 'pipeline --stale verify',
      args: (out: string) => ['pipeline', '-t', 'Shopify', '--country', 'germany', '--stale', 'verify', '-o', out],
    },
  ];
  for (const command of commands) {
    it(`${command.name} exits 2 before any paid call and any output, naming the three ways`, async () => {
      const dir = await scratchDir();
      const out = join(dir, 'out.csv');
      const before = await units();
      // verify spawned; the other commands run the same main() in process.
      const run =
        command.name === 'verify'
          ? await prospect(command.args(out), { cwd: dir })
          : await inProcess(command.args(out));
      expect(run.code).toBe(2);
      expect(await units()).toBe(before);
      expect(existsSync(out)).toBe(false);
      expect(run.stderr).toContain('--verify-budget N');
      expect(run.stderr).toContain('--yes');
      expect(run.stderr).toContain('prospect config set verify-budget N');
    });
  }

  it('a verify-budget in prospect config is the cap that lets a pipe spend, and no more', async () => {
    const config = await scratchDir();
    expect(
      (await runInProcess(['config', 'set', 'verify-budget', '4'], { env: { PROSPECT_CONFIG_DIR: config } })).code,
    ).toBe(0);
    const before = await units();
    // In process: off a terminal is a pipe in process too (the refusal above is spawned).
    const run = await inProcess(['contacts', ...domains.slice(0, 6), '--stale', 'verify', '--format', 'csv'], {
      env: { PROSPECT_CONFIG_DIR: config },
    });
    expect(run.code, run.stderr).toBe(0);
    expect((await units()) - before).toBe(4);
    expect(run.stderr).toMatch(/warning: verified 4 of \d+; \d+ left unchecked \(budget\)/);
  });
});

describe('one ledger of paid results, shared by every command', () => {
  it('contacts --stale verify, then verify --file on its output, pays only for addresses never paid', async () => {
    const cache = await scratchDir();
    const dir = await scratchDir();
    const env = { PROSPECT_CACHE_DIR: cache };
    const start = await units();
    // Three domains (about 200 addresses): the budget pays 15 of them, verify then pays for the rest.
    const contacts = await inProcess(
      ['contacts', ...domains.slice(0, 3), '--stale', 'verify', '--verify-budget', '15', '--format', 'csv'],
      { env },
    );
    expect(contacts.code, contacts.stderr).toBe(0);
    expect((await units()) - start).toBe(15);
    await expectVerifyPaysOnlyNeverPaid(csvRecords(contacts.stdout), dir, env);

    // The ledger is private.
    const [ledger] = (await readdir(cache)).filter((name) => name.endsWith('.ndjson'));
    expect((await stat(join(cache, ledger!))).mode & 0o777).toBe(0o600);
    expect((await stat(cache)).mode & 0o777).toBe(0o700);
  });

  it('verify reads the verification and verified_at columns of its input: a recently verified row costs nothing', async () => {
    const dir = await scratchDir();
    const contacts = await inProcess([
      'contacts',
      ...domains.slice(0, 2),
      '--stale',
      'verify',
      '--verify-budget',
      '6',
      '--no-cache',
      '--format',
      'csv',
    ]);
    expect(contacts.code, contacts.stderr).toBe(0);
    await writeFile(join(dir, 'people.csv'), contacts.stdout);
    const before = await units();
    // Another cache (empty), so only the input's own columns say what was paid for.
    const verify = await inProcess(['verify', '--file', join(dir, 'people.csv'), '--yes', '--format', 'csv'], {
      env: { PROSPECT_CACHE_DIR: await scratchDir() },
    });
    expect(verify.code, verify.stderr).toBe(0);
    expect((await units()) - before).toBe(neverPaid(csvRecords(contacts.stdout)));
  });

  it('pipeline --state … --stale verify, then verify --file on its output, pays only for addresses never paid', async () => {
    const cache = await scratchDir();
    const dir = await scratchDir();
    const env = { PROSPECT_CACHE_DIR: cache };
    const start = await units();
    const pipeline = await inProcess(
      [
        'pipeline',
        '-t',
        'Shopify',
        '--country',
        'germany',
        '--seniority',
        'cxo',
        '--stale',
        'verify',
        '--verify-budget',
        '12',
        '--state',
        'state',
        '-o',
        'leads.csv',
      ],
      { env, cwd: dir },
    );
    expect(pipeline.code, pipeline.stderr).toBe(0);
    expect((await units()) - start).toBe(12);
    await expectVerifyPaysOnlyNeverPaid(csvRecords(await readFile(join(dir, 'leads.csv'), 'utf8')), dir, env);
  });

  it('a short budget goes to the addresses confirmed longest ago', async () => {
    const emails = ['new@example-1.com', 'old@example-2.com', 'mid@example-3.com', 'older@example-4.com'];
    const seen = ['2026-01-01', '2021-05-01', '2024-03-01', '2019-02-01'];
    const dir = await scratchDir();
    await writeFile(
      join(dir, 'people.csv'),
      `business_email,business_email_last_seen\n${emails.map((email, index) => `${email},${seen[index]}`).join('\n')}\n`,
    );
    const run = await inProcess([
      'verify',
      '--file',
      join(dir, 'people.csv'),
      '--verify-budget',
      '2',
      '--format',
      'csv',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const checked = csvRecords(run.stdout)
      .filter((row) => row.verification !== 'unchecked')
      .map((row) => row.business_email);
    expect(checked.sort()).toEqual(['old@example-2.com', 'older@example-4.com']);
    expect(run.stderr).toContain('warning: verified 2 of 4; 2 left unchecked (budget)');
  });

  it('two runs at once on one ledger never pay twice for an address', async () => {
    // Spawned: two processes at once (runs in process go one at a time).
    const slow = await startTestSandbox({ asOf: todayUtc(), latencyMs: 20 });
    try {
      const cache = await scratchDir();
      const input = Array.from({ length: 120 }, (_, index) => `person${index}@example-${index % 7}.com`).join('\n');
      const options = { url: slow.url, apiKey: KEY, input, env: { PROSPECT_CACHE_DIR: cache } };
      const [first, second] = await Promise.all([
        runCli(['verify', '--yes', '--format', 'csv'], options),
        runCli(['verify', '--yes', '--format', 'csv'], options),
      ]);
      expect(first.code, first.stderr).toBe(0);
      expect(second.code, second.stderr).toBe(0);
      expect((await sandboxStats(slow.url)).units.growth).toBe(120);
      expect(second.stdout).toBe(first.stdout);
    } finally {
      await slow.close();
    }
  }, 60_000);

  it('two --sandbox runs in a row pay once: the in-process sandbox is one service for its seed, whatever its port', async () => {
    const cache = await scratchDir();
    const env = { PROSPECT_CACHE_DIR: cache };
    const args = ['--sandbox', '--debug', 'verify', '--yes', 'ana@acme.com', 'bob@acme.com', '--format', 'csv'];
    // In process: each run starts its own sandbox on a port of its own, as a process would.
    const first = await runInProcess(args, { env });
    const second = await runInProcess(args, { env });
    expect(first.code, first.stderr).toBe(0);
    expect(second.code, second.stderr).toBe(0);
    // Each request is logged as it goes on the wire: the first run asked twice, the second never.
    expect(first.stderr.match(/GET \S+\/api\/v1\/verify/g)).toHaveLength(2);
    expect(second.stderr).not.toMatch(/\/api\/v1\/verify/);
    expect(second.stdout).toBe(first.stdout);
    // One ledger, and its write-ahead record of the two calls sent.
    const files = (await readdir(cache)).sort();
    expect(files).toHaveLength(2);
    expect(files[1]).toBe(files[0]!.replace(/\.ndjson$/, '.sent.ndjson'));
  });
});

/** Runs prospect on a pseudo-terminal (`script`), answers the spend question when it appears. */
function onTerminal(args: string[], answer: string, env: Record<string, string> = {}) {
  return answerOnTerminal(args, answer, { url: sandbox.url, apiKey: KEY, env });
}

describe.skipIf(SCRIPT.skip)('on a terminal, the question comes before the first paid call', () => {
  it('verify shows the estimate; "n" spends nothing and exits 2, a decision and not an interrupt', async () => {
    const before = await units();
    const run = await onTerminal(['verify', 'ana@example.com', 'bob@example.com', 'ana@example.com'], 'n\r');
    expect(run.asked).toBe(true);
    expect(run.screen).toContain('Verifying 2 addresses: 0 already paid for, 2 to pay for, 2 units.');
    expect(run.code).toBe(2);
    expect(run.screen).toContain('prospect: not spent: the question was answered no; nothing was paid for or written.');
    expect(await units()).toBe(before);
  });

  it('verify: Ctrl-C at the question spends nothing and exits 130', async () => {
    const before = await units();
    const run = await onTerminal(['verify', 'ana@example.com', 'bob@example.com'], '\x03');
    expect(run.asked).toBe(true);
    expect(run.code).toBe(130);
    expect(run.screen).toContain('prospect: cancelled; nothing was spent.');
    expect(run.screen).not.toContain('internal error');
    expect(await units()).toBe(before);
  });

  it('contacts --stale verify asks too; Ctrl-C spends nothing and exits 130', async () => {
    const before = await units();
    const run = await onTerminal(['contacts', ...domains.slice(0, 3), '--stale', 'verify'], '\x03');
    expect(run.asked).toBe(true);
    // The count of all the run's addresses (spend-plan.cli.test.ts checks it is exact).
    expect(run.screen).toMatch(/Verifying [1-9]\d* address(es)?: 0 already paid for/);
    expect(run.code).toBe(130);
    expect(run.screen).toContain('prospect: cancelled; nothing was spent.');
    expect(await units()).toBe(before);
  });

  it('pipeline --stale verify asks too; "n" spends nothing and exits 2, "y" spends within the budget', async () => {
    const args = [
      'pipeline',
      '-t',
      'Shopify',
      '--country',
      'germany',
      '--seniority',
      'cxo',
      '--stale',
      'verify',
      '--verify-budget',
      '3',
      '--format',
      'csv',
    ];
    const before = await units();
    const no = await onTerminal(args, 'n\r');
    expect(no.asked).toBe(true);
    expect(no.screen).toContain('3 units at most (--verify-budget 3)');
    expect(no.code).toBe(2);
    expect(await units()).toBe(before);
    const yes = await onTerminal(args, 'y\r', { PROSPECT_CACHE_DIR: await scratchDir() });
    expect(yes.asked).toBe(true);
    expect(yes.code, yes.screen).toBe(0);
    expect((await units()) - before).toBe(3);
  });
});
