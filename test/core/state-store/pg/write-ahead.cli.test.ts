/**
 * Issue 41 point 5 for the team store: a `pipeline --state pg:NAME --stale verify --verify-budget N`
 * SIGKILLed mid-pay and resumed, against a sandbox that ignores Idempotency-Key (every call charged).
 * Money is the sandbox's count (its stats), the record is read by SQL here, never through prospect:
 * - the write-ahead rows (prospect.sent) committed before the kill count at least the units charged;
 * - over both runs the sandbox charged at most N, and the resume's summary never says less.
 * The killed run is spawned (SIGKILL is a process's); the resume runs main() in process.
 */
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { finishCli, runInProcess, scratchDir, startCli } from '../../../helpers/cli.js';
import { POSTGRES, testDatabase, TEST_TEAM_KEY } from '../../../helpers/postgres.js';
import { SANDBOX_KEYS, startTestSandbox } from '../../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
const BUDGET = 20;
const CONCURRENCY = 8;
/** About 35% of the budget, as in the issue. */
const KILL_AFTER = 7;
const SET = [
  '-t',
  'Shopify',
  '--country',
  'united states',
  '--max',
  '40',
  '--seniority',
  'cxo,vp',
  '--stale',
  'verify',
];

describe.skipIf(POSTGRES.skip)('pipeline --state pg:NAME, SIGKILLed mid-pay and resumed', () => {
  it(`against a service that ignores the key: at most --verify-budget ${BUDGET} charged`, async () => {
    // Latency, so that the kill lands while paid calls are in flight.
    const sandbox = await startTestSandbox({ latencyMs: 40, recordTraffic: true, ignoreIdempotencyKey: true });
    try {
      const db = await testDatabase('wal');
      const home = await scratchDir('home-wal-');
      const units = (): number => sandbox.stats().units.growth;
      const options = {
        url: sandbox.url,
        apiKey: KEY,
        cwd: home,
        timeoutMs: 120_000,
        env: { HOME: home, PROSPECT_STATE_URL: db.url, PROSPECT_TEAM_KEY: TEST_TEAM_KEY },
      };
      const args = [
        'pipeline',
        ...SET,
        '--verify-budget',
        String(BUDGET),
        '--concurrency',
        String(CONCURRENCY),
        '--state',
        'pg:wal',
        '-o',
        join(home, 'leads.csv'),
        '--summary',
        join(home, 'run.json'),
      ];
      const child = startCli(args, options);
      child.stdin!.end();
      const finished = finishCli(child, options);
      while (units() < KILL_AFTER && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 2));
      child.kill('SIGKILL');
      const killed = await finished;
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      const chargedBeforeKill = units();
      expect(chargedBeforeKill).toBeGreaterThanOrEqual(KILL_AFTER);
      const { rows } = await db.sql('SELECT coalesce(sum(calls), 0)::int AS n FROM prospect.sent');
      expect(rows[0].n).toBeGreaterThanOrEqual(chargedBeforeKill);

      const resumed = await runInProcess(args, options);
      expect(resumed.code, resumed.stderr).toBe(0);
      const charged = units();
      expect(charged).toBeLessThanOrEqual(BUDGET);
      // Paid twice: only calls the kill caught in flight, at most --concurrency of them.
      expect(charged - sandbox.stats().verified_emails!.length).toBeLessThanOrEqual(CONCURRENCY);
      const { verification } = JSON.parse(await readFile(join(home, 'run.json'), 'utf8'));
      expect(verification.units_spent).toBeLessThanOrEqual(charged);
      expect(verification.units_spent_at_most).toBeGreaterThanOrEqual(charged);
      expect(verification.units_spent_at_most).toBeLessThanOrEqual(BUDGET);
      // The record keeps addresses as keyed hashes only.
      const stored = await db.sql('SELECT email_hash FROM prospect.sent');
      const bytes = (stored.rows as { email_hash: Buffer }[])
        .map((row) => row.email_hash.toString('latin1'))
        .join('\n');
      expect(stored.rows.length).toBeGreaterThan(0);
      expect(sandbox.stats().verified_emails!.filter((email) => bytes.includes(email))).toEqual([]);
    } finally {
      await sandbox.close();
    }
  }, 120_000);
});
