/**
 * The session lost mid-run: noticed at once, without a call, and every later call of the store ends with
 * exit 5, so no paid call follows the loss.
 */
import { describe, expect, it } from 'vitest';
import { parseStateUrl } from '../../../../src/config/state-url.js';
import { openPgStore } from '../../../../src/core/state-store/pg/store.js';
import { CliError, ExitCode } from '../../../../src/exit-codes.js';
import { POSTGRES, testDatabase, TEST_TEAM_KEY } from '../../../helpers/postgres.js';

describe.skipIf(POSTGRES.skip)('a lost session', () => {
  it('ends the next claim with exit 5, naming the database without its password', async () => {
    const db = await testDatabase('lost');
    const store = await openPgStore(parseStateUrl(db.url), 'lost-host', TEST_TEAM_KEY);
    const ledger = await store.openVerificationLedger('L', { freshSince: new Date(0) });
    await (await ledger.claim('ana@example.com', 'key-a')).release();
    // The server ends the session, as a restart or a failover would.
    await db.sql(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'prospect lost-host'",
    );
    // Noticed without a call: the verifier asks this before each paid call.
    let noticed: Error | undefined;
    for (let waited = 0; noticed === undefined && waited < 10_000; waited += 10) {
      noticed = ledger.failed?.();
      if (noticed === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect((noticed as CliError).exitCode).toBe(ExitCode.service);
    expect(noticed?.message).toMatch(/terminating connection due to administrator command/);
    const failed = await ledger.claim('bob@example.com', 'key-b').catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(CliError);
    expect((failed as CliError).exitCode).toBe(ExitCode.service);
    expect((failed as CliError).message).toContain(
      `lost the session with the state database at 127.0.0.1:${db.port}, database ${db.name}`,
    );
    expect((failed as CliError).message).not.toContain(db.password);
    // And every call after it.
    const again = await ledger.claim('carol@example.com', 'key-c').catch((error: unknown) => error);
    expect((again as CliError).exitCode).toBe(ExitCode.service);
    await store.close();
  });
});
