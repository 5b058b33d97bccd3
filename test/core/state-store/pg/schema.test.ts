/** The team store's schema on a real server: its own schema, migrations under load, a newer schema refused. */
import { describe, expect, it } from 'vitest';
import { parseStateUrl } from '../../../../src/config/state-url.js';
import { CliError, ExitCode } from '../../../../src/exit-codes.js';
import { SCHEMA_VERSION } from '../../../../src/core/state-store/pg/schema.js';
import { openPgStore } from '../../../../src/core/state-store/pg/store.js';
import { POSTGRES, testDatabase, TEST_TEAM_KEY } from '../../../helpers/postgres.js';

describe.skipIf(POSTGRES.skip)('migrations', () => {
  it('16 processes starting at once on an empty database all succeed, in a schema of its own', async () => {
    const db = await testDatabase('migrate16');
    const url = parseStateUrl(db.url);
    // 16 sessions, as 16 processes have: the first migrates, the others wait for its lock and find it done.
    const stores = await Promise.all(Array.from({ length: 16 }, () => openPgStore(url, 'host', TEST_TEAM_KEY)));
    await Promise.all(stores.map((store) => store.close()));
    const { rows } = await db.sql('SELECT version FROM prospect.meta');
    expect(rows).toEqual([{ version: SCHEMA_VERSION }]);
    const inPublic = await db.sql("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'");
    expect(inPublic.rows[0].n).toBe(0);
  });

  it('a database written by a newer prospect is refused with exit 2 and left as it is', async () => {
    const db = await testDatabase('newer');
    const url = parseStateUrl(db.url);
    await (await openPgStore(url, 'host', TEST_TEAM_KEY)).close();
    await db.sql('UPDATE prospect.meta SET version = $1', [SCHEMA_VERSION + 1]);
    const refused = await openPgStore(url, 'host', TEST_TEAM_KEY).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CliError);
    expect((refused as CliError).exitCode).toBe(ExitCode.usage);
    expect((refused as CliError).message).toMatch(/written by a newer prospect/);
    expect((refused as CliError).hint).toMatch(/Upgrade prospect/);
    expect((await db.sql('SELECT version FROM prospect.meta')).rows[0].version).toBe(SCHEMA_VERSION + 1);
  });

  it('a role without CREATE on the database: exit 2 naming the grant', async () => {
    const db = await testDatabase('noprivs');
    await db.sql(`REVOKE CREATE ON DATABASE ${db.name} FROM ${db.role}`);
    const refused = await openPgStore(parseStateUrl(db.url), 'host', TEST_TEAM_KEY).catch((error: unknown) => error);
    expect((refused as CliError).exitCode).toBe(ExitCode.usage);
    expect((refused as CliError).hint).toMatch(/CREATE on the database/);
    expect((refused as CliError).message).not.toContain(db.password);
  });
});

describe.skipIf(POSTGRES.skip)('claims', () => {
  it("a claim whose holder's session ended is taken over at once, keeping its token", async () => {
    const db = await testDatabase('takeover');
    const url = parseStateUrl(db.url);
    const [a, b] = [await openPgStore(url, 'a', TEST_TEAM_KEY), await openPgStore(url, 'b', TEST_TEAM_KEY)];
    const first = await (
      await a.openVerificationLedger('L', { freshSince: new Date(0) })
    ).claim('ana@example.com', 'key-a');
    expect(first.token).toBe('key-a');
    // The holder dies (its connection closes) before paying: its claim is taken over, token and all.
    await a.close();
    const second = await (
      await b.openVerificationLedger('L', { freshSince: new Date(0) })
    ).claim('ana@example.com', 'key-b');
    expect(second.token).toBe('key-a');
    // Its answer lost too: the next claim still carries the same token.
    await second.release(true);
    const third = await (
      await b.openVerificationLedger('L', { freshSince: new Date(0) })
    ).claim('ana@example.com', 'key-c');
    expect(third.token).toBe('key-a');
    await third.release();
    await b.close();
  });
});
