/**
 * Flags out of range and unknown values exit 2 before any request, for every command: each case runs
 * against its own sandbox, whose /_sandbox/stats must still count zero requests afterwards. A usage
 * error is one short message, never a stack trace, and nothing on stdout.
 *
 * The binary is spawned for one case (exit 2 and a clean stderr from a real process); every other
 * case runs the same main() in process (runInProcess: same env, exit code and key-leak checks), with
 * its own working directory for cases that name a relative path.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir } from '../helpers/cli.js';
import { sandboxStats } from '../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox } from '../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
const DOMAINS = 'acme.com\nglobex.com\n';
const EMAILS = 'ada@acme.com\nbob@globex.com\n';

interface Case {
  /** The flag or input that is wrong. */
  what: string;
  args: string[];
  input?: string;
  /** Run through the binary (the others run in process). */
  spawned?: true;
}

const COMPANIES = ['companies', '-t', 'Shopify'];
const CONTACTS = ['contacts'];
const VERIFY = ['verify'];
const PIPELINE = ['pipeline', '-t', 'Shopify'];

const GLOBAL_CASES: Case[] = [
  { what: '--timeout 0', args: ['--timeout', '0', ...COMPANIES] },
  { what: '--timeout 601', args: ['--timeout', '601', ...COMPANIES] },
  { what: '--timeout 1.5', args: ['--timeout', '1.5', ...COMPANIES] },
  { what: '--max-retries -1', args: ['--max-retries', '-1', ...COMPANIES] },
  { what: '--max-retries 21', args: ['--max-retries', '21', ...COMPANIES] },
  { what: '--page-size 0', args: ['--page-size', '0', ...PIPELINE] },
  { what: '--page-size 1001', args: ['--page-size', '1001', ...COMPANIES] },
  { what: '--sandbox-plan gold', args: ['--sandbox-plan', 'gold', ...COMPANIES] },
  { what: 'an unknown global flag', args: ['--verbosee', ...COMPANIES] },
  { what: 'an unknown command', args: ['companys', '-t', 'Shopify'] },
];

const COMPANIES_CASES: Case[] = [
  { what: 'no --technology', args: ['companies'] },
  { what: '--max 0', args: [...COMPANIES, '--max', '0'] },
  { what: '--max 2.5', args: [...COMPANIES, '--max', '2.5'] },
  { what: '--format xml', args: [...COMPANIES, '--format', 'xml'] },
  { what: '--columns with an unknown column', args: [...COMPANIES, '--columns', 'domain,nope'] },
  { what: '--employee-range big', args: [...COMPANIES, '--employee-range', 'big'] },
  { what: '--employee-range 500-11', args: [...COMPANIES, '--employee-range', '500-11'] },
  { what: 'the same technology required and excluded', args: [...COMPANIES, '-T', 'shopify'] },
  { what: '-o with an extension prospect cannot write', args: [...COMPANIES, '-o', 'x.xls'], spawned: true },
  { what: '--employee-range +500', args: [...COMPANIES, '--employee-range', '+500'] },
  { what: '--employee-range with an empty item', args: [...COMPANIES, '--employee-range', '1-10,'] },
  { what: '--country ""', args: [...COMPANIES, '--country', ''] },
  { what: 'an unknown flag', args: [...COMPANIES, '--bogus'] },
];

const CONTACTS_CASES: Case[] = [
  { what: '--seniority boss', args: [...CONTACTS, '--seniority', 'cxo,boss'], input: DOMAINS },
  { what: '--seniority ""', args: [...CONTACTS, '--seniority', ''], input: DOMAINS },
  { what: '--limit 0', args: [...CONTACTS, '--limit', '0'], input: DOMAINS },
  { what: '--limit 1001', args: [...CONTACTS, '--limit', '1001'], input: DOMAINS },
  { what: '--concurrency 0', args: [...CONTACTS, '--concurrency', '0'], input: DOMAINS },
  { what: '--concurrency 33', args: [...CONTACTS, '--concurrency', '33'], input: DOMAINS },
  { what: '--per-company 0', args: [...CONTACTS, '--per-company', '0'], input: DOMAINS },
  { what: '--max-age soon', args: [...CONTACTS, '--max-age', 'soon'], input: DOMAINS },
  { what: '--stale maybe', args: [...CONTACTS, '--stale', 'maybe'], input: DOMAINS },
  { what: '--verify-budget without --stale verify', args: [...CONTACTS, '--verify-budget', '5'], input: DOMAINS },
  { what: '--cache-ttl whenever', args: [...CONTACTS, '--stale', 'verify', '--cache-ttl', 'whenever'], input: DOMAINS },
  { what: '--format xml', args: [...CONTACTS, '--format', 'xml'], input: DOMAINS },
  { what: '--columns with an unknown column', args: [...CONTACTS, '--columns', 'domain,nope'], input: DOMAINS },
  { what: 'an empty input', args: CONTACTS, input: '\n# nothing\n\n' },
  { what: '--strict with a junk line', args: [...CONTACTS, '--strict'], input: `${DOMAINS}not a domain!\n` },
  { what: '--domains-file that does not exist', args: [...CONTACTS, '--domains-file', '/nonexistent-dir/domains.txt'] },
];

const VERIFY_CASES: Case[] = [
  { what: '--budget -1', args: [...VERIFY, '--budget', '-1'], input: EMAILS },
  { what: '--budget ten', args: [...VERIFY, '--budget', 'ten'], input: EMAILS },
  { what: '--concurrency 0', args: [...VERIFY, '--concurrency', '0'], input: EMAILS },
  { what: '--confirm-over -1', args: [...VERIFY, '--confirm-over', '-1'], input: EMAILS },
  { what: '--cache-ttl whenever', args: [...VERIFY, '--cache-ttl', 'whenever'], input: EMAILS },
  { what: '--format xml', args: [...VERIFY, '--format', 'xml'], input: EMAILS },
  { what: 'an empty input', args: VERIFY, input: '\n\n' },
  {
    what: '--strict with a malformed address',
    args: [...VERIFY, '--strict'],
    input: `${EMAILS}a@@b.com\n`,
  },
  { what: '--file that does not exist', args: [...VERIFY, '--file', '/nonexistent-dir/emails.txt'] },
];

const PIPELINE_CASES: Case[] = [
  { what: 'no --technology', args: ['pipeline'] },
  { what: '--only-new without --state', args: [...PIPELINE, '--only-new'] },
  { what: '--seniority boss', args: [...PIPELINE, '--seniority', 'boss'] },
  { what: '--limit 1001', args: [...PIPELINE, '--limit', '1001'] },
  { what: '--concurrency 33', args: [...PIPELINE, '--concurrency', '33'] },
  { what: '--max-age soon', args: [...PIPELINE, '--max-age', 'soon'] },
  { what: '--stale maybe', args: [...PIPELINE, '--stale', 'maybe'] },
  { what: '--verify-budget -1', args: [...PIPELINE, '--stale', 'verify', '--verify-budget', '-1'] },
  { what: '--format xml', args: [...PIPELINE, '--format', 'xml'] },
  { what: '--employee-range big', args: [...PIPELINE, '--employee-range', 'big'] },
  { what: '-o with an extension prospect cannot write', args: [...PIPELINE, '-o', 'leads.xls'] },
  { what: '--state under a file', args: [...PIPELINE, '--state', '/dev/null/state'] },
];

/** The sandbox must refuse before it listens: a case that wrongly succeeded would print its URL. */
const SANDBOX_CASES: Case[] = [
  { what: '--port 70000', args: ['sandbox', '--port', '70000'] },
  { what: '--companies 0', args: ['sandbox', '--companies', '0'] },
  { what: '--seed -1', args: ['sandbox', '--seed', '-1'] },
  { what: '--as-of 2025-02-30', args: ['sandbox', '--as-of', '2025-02-30'] },
  { what: '--latency slow', args: ['sandbox', '--latency', 'slow'] },
  { what: '--fail-rate 1.5', args: ['sandbox', '--fail-rate', '1.5'] },
  { what: '--faults with an unknown kind', args: ['sandbox', '--fail-rate', '0.2', '--faults', '500,teapot'] },
  { what: '--faults ""', args: ['sandbox', '--fail-rate', '0.2', '--faults', ''] },
  { what: '--faults without --fail-rate', args: ['sandbox', '--faults', 'all'] },
  { what: '--fault-seed 4294967296', args: ['sandbox', '--fail-rate', '0.2', '--fault-seed', '4294967296'] },
  { what: '--faults-after -1', args: ['sandbox', '--fail-rate', '0.2', '--faults-after', '-1'] },
  { what: '--latency-spike 0', args: ['sandbox', '--latency-spike', '0'] },
  { what: '--latency-spike-rate 2', args: ['sandbox', '--latency-spike', '100', '--latency-spike-rate', '2'] },
  { what: '--latency-spike-rate without --latency-spike', args: ['sandbox', '--latency-spike-rate', '0.5'] },
  { what: '--rate-limit 0', args: ['sandbox', '--rate-limit', '0'] },
  { what: '--host 0.0.0.0 without --public', args: ['sandbox', '--host', '0.0.0.0'] },
];

const TABLE = [
  ...GLOBAL_CASES.map((c) => ({ ...c, command: 'global flags' })),
  ...COMPANIES_CASES.map((c) => ({ ...c, command: 'companies' })),
  ...CONTACTS_CASES.map((c) => ({ ...c, command: 'contacts' })),
  ...VERIFY_CASES.map((c) => ({ ...c, command: 'verify' })),
  ...PIPELINE_CASES.map((c) => ({ ...c, command: 'pipeline' })),
  ...SANDBOX_CASES.map((c) => ({ ...c, command: 'sandbox' })),
].map((c) => ({ ...c, how: c.spawned ? 'spawned' : 'in process' }));

describe('flags out of range and unknown values exit 2 before any request', () => {
  it('spawns exactly one case, the rest run the same main() in process', () => {
    expect(TABLE.filter((c) => c.spawned)).toHaveLength(1);
  });

  // Concurrent: each case has its own small sandbox, so they do not share counters.
  it.concurrent.for(TABLE)(
    '$command: $what ($how)',
    { timeout: 20_000 },
    async ({ args, input, spawned }, { expect }) => {
      const sandbox = await startTestSandbox({ companies: 2000, seed: 9 });
      try {
        const cwd = await scratchDir();
        // The sandbox command gets a free port, so a case that wrongly started would not clash; it would
        // print its URL and run until the timeout below kills it.
        const fullArgs = args[0] === 'sandbox' && !args.includes('--port') ? [...args, '--port', '0'] : args;
        const options = {
          url: sandbox.url,
          apiKey: KEY,
          input: input ?? '',
          env: { PROSPECT_CACHE_DIR: join(cwd, 'cache') },
          timeoutMs: 15_000,
        };
        const run = spawned
          ? await runCli(fullArgs, { ...options, cwd })
          : await runInProcess(fullArgs, { ...options, cwd });
        expect(run.code, run.stderr).toBe(2);
        expect(run.stdout).toBe('');
        expect(run.stderr).toMatch(/\S/);
        expect(run.stderr).not.toMatch(/\n\s+at /);
        expect(run.stderr.trim().split('\n').length).toBeLessThanOrEqual(3);
        expect((await sandboxStats(sandbox.url)).requests.total).toBe(0);
      } finally {
        await sandbox.close();
      }
    },
  );
});

describe('an output that cannot be written exits 7 before any request', () => {
  it.concurrent.for([
    { what: 'companies', args: [...COMPANIES, '-o', '/nonexistent-dir/x.csv'], how: 'in process' },
    { what: 'pipeline', args: [...PIPELINE, '-o', '/nonexistent-dir/leads.csv'], how: 'in process' },
    { what: 'pipeline --summary', args: [...PIPELINE, '--summary', '/nonexistent-dir/run.json'], how: 'in process' },
    { what: 'contacts', args: [...CONTACTS, '-o', '/nonexistent-dir/people.csv'], input: DOMAINS, how: 'in process' },
    { what: 'verify', args: [...VERIFY, '-o', '/nonexistent-dir/verified.csv'], input: EMAILS, how: 'in process' },
  ])('$what into a missing directory ($how)', { timeout: 20_000 }, async ({ args, input, how }, { expect }) => {
    const sandbox = await startTestSandbox({ companies: 2000, seed: 9 });
    try {
      const cwd = await scratchDir();
      const options = {
        url: sandbox.url,
        apiKey: KEY,
        input: input ?? '',
        env: { PROSPECT_CACHE_DIR: join(cwd, 'cache') },
        timeoutMs: 15_000,
      };
      const run =
        how === 'spawned' ? await runCli(args, { ...options, cwd }) : await runInProcess(args, { ...options, cwd });
      expect(run.code, run.stderr).toBe(7);
      expect(run.stderr).toMatch(/nonexistent-dir does not exist/);
      expect((await sandboxStats(sandbox.url)).requests.total).toBe(0);
    } finally {
      await sandbox.close();
    }
  });
});
