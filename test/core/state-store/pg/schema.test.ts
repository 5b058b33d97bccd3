/**
 * The team store's schema on a real server: its own schema, migrations under load, a newer schema
 * refused, a schema 2 database re-keyed with the team key, another team key refused.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseStateUrl } from '../../../../src/config/state-url.js';
import { CliError, ExitCode } from '../../../../src/exit-codes.js';
import { SCHEMA_VERSION } from '../../../../src/core/state-store/pg/schema.js';
import { openPgStore } from '../../../../src/core/state-store/pg/store.js';
import { POSTGRES, testDatabase, TEST_TEAM_KEY } from '../../../helpers/postgres.js';
import { scratchDir } from '../../../helpers/scratch.js';

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

const sha256 = (text: string) => createHash('sha256').update(text).digest();
const lead = (email: string) => ({ domain: 'example.com', business_email: email, full_name: null, title: null });

describe.skipIf(POSTGRES.skip)('schema 3: the team key', () => {
  it('a schema 2 database is re-keyed: its results, leads and unfinished run found, no hash a dictionary finds', async () => {
    const db = await testDatabase('schema2');
    const url = parseStateUrl(db.url);
    await (await openPgStore(url, 'host', TEST_TEAM_KEY)).close();
    // Back to what schema 2 kept (computed here, as schema 2 did): an unkeyed digest of the ledger name and
    // the address; a lead key as it is (sha256 of email|domain, 12 bytes); an unfinished run's pages in clear.
    await db.sql('ALTER TABLE prospect.meta DROP COLUMN team_key_check');
    await db.sql('DROP TABLE prospect.sent');
    await db.sql(
      'DROP TABLE prospect.snapshots, prospect.snapshot_heads, prospect.snapshot_companies, prospect.snapshot_seen',
    );
    await db.sql('DROP TABLE prospect.suppressed');
    await db.sql('DROP TABLE prospect.exported_addresses');
    await db.sql('UPDATE prospect.meta SET version = 2');
    await db.sql(
      `INSERT INTO prospect.verifications (ledger, email_hash, status, verified_at) VALUES ('L', $1, 'valid', $2)`,
      [sha256('L\nana@example.com'), '2026-11-01T10:00:00Z'],
    );
    const oldLeadKey = sha256('ana@example.com|example.com').subarray(0, 12);
    await db.sql("INSERT INTO prospect.exported (key, job, run_id) VALUES ($1, 'old', 'run-0')", [oldLeadKey]);
    const output = 'bob@example.com,example.com\n';
    const keys = `${sha256('bob@example.com|example.com').subarray(0, 12).toString('hex')}\n`;
    const checkpoint = { run_id: 'run-1', output_bytes: output.length, keys_bytes: keys.length, spooled: false };
    await db.sql("INSERT INTO prospect.jobs (name, checkpoint) VALUES ('weekly', $1)", [JSON.stringify(checkpoint)]);
    await db.sql(
      `INSERT INTO prospect.job_chunks (job, run_id, file, seq, data)
       VALUES ('weekly', 'run-1', 'output', 0, $1), ('weekly', 'run-1', 'keys', 1, $2)`,
      [Buffer.from(output), Buffer.from(keys)],
    );

    const store = await openPgStore(url, 'host', TEST_TEAM_KEY);
    expect((await db.sql('SELECT version FROM prospect.meta')).rows).toEqual([{ version: SCHEMA_VERSION }]);
    const ledger = await store.openVerificationLedger('L', { freshSince: new Date(0) });
    expect(ledger.get('ana@example.com')?.status).toBe('valid');
    const other = store.job('other');
    other.beginRun('run-2');
    expect(await other.leads.newOnly([lead('ana@example.com'), lead('cy@example.com')])).toEqual([
      lead('cy@example.com'),
    ]);
    const dir = await scratchDir();
    const files = {
      checkpointPath: join(dir, 'checkpoint.json'),
      outputPath: join(dir, 'output'),
      rowsPath: join(dir, 'rows'),
      keysPath: join(dir, 'keys'),
      publishingPath: join(dir, 'publishing.json'),
    };
    await store.job('weekly').lock('pipeline', files);
    expect(await readFile(files.outputPath, 'utf8')).toBe(output);
    expect(await readFile(files.keysPath, 'utf8')).toBe(keys);
    await store.close();

    const { rows } = await db.sql(
      `SELECT email_hash AS h FROM prospect.verifications UNION ALL SELECT key FROM prospect.exported
       UNION ALL SELECT data FROM prospect.job_chunks`,
    );
    const stored = (rows as { h: Buffer }[]).map((row) => row.h);
    const dictionary = ['ana@example.com', 'bob@example.com', 'cy@example.com'].flatMap((address) => [
      sha256(address),
      sha256(`L\n${address}`),
      sha256(`${address}|example.com`).subarray(0, 12),
    ]);
    expect(stored.filter((value) => dictionary.some((guess) => guess.equals(value)))).toEqual([]);
    expect(stored.filter((value) => value.includes('bob@example.com'))).toEqual([]);
  });

  it('another team key than the one that wrote the database: exit 2, nothing changed', async () => {
    const db = await testDatabase('otherkey');
    const url = parseStateUrl(db.url);
    await (await openPgStore(url, 'host', TEST_TEAM_KEY)).close();
    const before = (await db.sql('SELECT team_key_check FROM prospect.meta')).rows;
    const refused = await openPgStore(url, 'host', 'another-team-key-0123456789abcdef0123').catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(CliError);
    expect((refused as CliError).exitCode).toBe(ExitCode.usage);
    expect((refused as CliError).message).toMatch(/^the team key on this machine is not the one the state database/);
    expect((refused as CliError).message).not.toContain(db.password);
    expect((await db.sql('SELECT team_key_check FROM prospect.meta')).rows).toEqual(before);
  });
});
