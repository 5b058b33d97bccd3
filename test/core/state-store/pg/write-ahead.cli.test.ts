/**
 * Issue 41 point 5 for the team store: a `pipeline --state pg:NAME --stale verify --verify-budget N`
 * SIGKILLed mid-pay and resumed, against a sandbox that ignores Idempotency-Key (every call charged).
 * Money is the sandbox's count (its stats), the record is read by SQL here, never through prospect:
 * - the write-ahead rows (prospect.sent) committed before the kill count at least the units charged;
 * - over both runs the sandbox charged at most N, and the resume's summary never says less;
 * - the rows hold keyed hashes only, and are gone once the run succeeded.
 * The killed run is spawned (SIGKILL is a process's); the resume runs main() in process.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { finishCli, runInProcess, scratchDir, startCli } from '../../../helpers/cli.js';
import { POSTGRES, testDatabase, TEST_TEAM_KEY } from '../../../helpers/postgres.js';
import { SANDBOX_KEYS, startTestSandbox, PAID_PIPELINE_SET } from '../../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
const BUDGET = 20;
const CONCURRENCY = 8;
/** About 35% of the budget, as in the issue. */
const KILL_AFTER = 7;
const SET = PAID_PIPELINE_SET;

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
      const { rows } = await db.sql('SELECT ledger, email_hash, calls FROM prospect.sent');
      const sent = rows as { ledger: string; email_hash: Buffer; calls: number }[];
      expect(sent.reduce((sum, row) => sum + row.calls, 0)).toBeGreaterThanOrEqual(chargedBeforeKill);
      // Addresses only as hashes keyed with the team key: no unkeyed digest of a charged address (computed here).
      const sha = (text: string) => createHash('sha256').update(text).digest('hex');
      const unkeyed = new Set(
        sandbox.stats().verified_emails!.flatMap((email) => [sha(email), sha(`${sent[0]!.ledger}\n${email}`)]),
      );
      expect(sent.filter((row) => unkeyed.has(row.email_hash.toString('hex')))).toEqual([]);

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
      // The run succeeded: no resume is left to count its record.
      expect((await db.sql('SELECT count(*)::int AS n FROM prospect.sent')).rows[0].n).toBe(0);
    } finally {
      await sandbox.close();
    }
  }, 120_000);
});
