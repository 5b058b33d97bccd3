/**
 * `prospect forget` across machines (issue 46), on a real PostgreSQL server (test/helpers/postgres.ts):
 * machine A forgets an address; machine B, with its own HOME and cache, never writes, verifies or
 * pays for it (the units and charged addresses counted at the sandbox). The database holds nothing
 * from which the address can be read back without the team key: not the text, nor an unkeyed digest.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess, scratchDir } from '../../helpers/cli.js';
import { sandboxStats } from '../../helpers/independent-client.js';
import { POSTGRES, testDatabase, TEST_TEAM_KEY, type TestDatabase } from '../../helpers/postgres.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../../helpers/sandbox.js';
import { ndjsonRecords } from '../../helpers/csv.js';

const KEY = SANDBOX_KEYS.growth;
let sandbox: RunningSandbox;
beforeAll(async () => {
  if (POSTGRES.skip) return;
  sandbox = await startTestSandbox({ recordTraffic: true });
});
afterAll(async () => {
  await sandbox?.close();
});

/** A machine of the team: its own HOME, cache and config, the team's state URL and key. */
async function machine(name: string, db: TestDatabase) {
  const home = await scratchDir(`home-${name}-`);
  const env = {
    HOME: home,
    HOSTNAME: name,
    PROSPECT_CACHE_DIR: join(home, 'cache'),
    PROSPECT_CONFIG_DIR: join(home, 'config'),
    PROSPECT_STATE_URL: db.url,
    PROSPECT_TEAM_KEY: TEST_TEAM_KEY,
  };
  return {
    home,
    run: (args: string[]) => runInProcess(args, { url: sandbox.url, apiKey: KEY, env, cwd: home, timeoutMs: 60_000 }),
  };
}

/** Every value of every table of prospect's schema, bytes decoded as latin1 so that any text in them shows. */
async function everythingStored(db: TestDatabase): Promise<string[]> {
  const { rows: tables } = await db.sql("SELECT tablename FROM pg_tables WHERE schemaname = 'prospect'");
  const values: string[] = [];
  for (const { tablename } of tables as { tablename: string }[]) {
    const { rows } = await db.sql(`SELECT * FROM prospect.${tablename}`);
    for (const row of rows as Record<string, unknown>[])
      for (const value of Object.values(row))
        values.push(Buffer.isBuffer(value) ? value.toString('hex') + value.toString('latin1') : JSON.stringify(value));
  }
  return values;
}

describe.skipIf(POSTGRES.skip)('prospect forget with a team store', () => {
  it('forget on machine A: machine B neither writes, verifies nor pays for the address', async () => {
    const db = await testDatabase('forget');
    const [a, b] = [await machine('host-a', db), await machine('host-b', db)];
    const set = ['pipeline', '-t', 'Shopify', '--country', 'US', '--max', '5', '-s', 'cxo,vp', '--format', 'ndjson'];
    // The leads before: read from the service directly, no state touched (a machine without the URL).
    const reference = await runInProcess(set, { url: sandbox.url, apiKey: KEY });
    expect(reference.code, reference.stderr).toBe(0);
    const leads = ndjsonRecords(reference.stdout);
    const address: string = leads.find((row) => row.business_email && row.email_freshness === 'stale').business_email;

    // Machine A exports the leads into the team's job first: what provenance answers from later.
    const exported = await a.run([...set, '--state', 'pg:weekly', '-o', 'week1.ndjson']);
    expect(exported.code, exported.stderr).toBe(0);

    const forgot = await a.run(['forget', address]);
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(forgot.stderr).toContain('in the team store');

    const charged = new Set((await sandboxStats(sandbox.url)).verified_emails as string[]);
    const units = (await sandboxStats(sandbox.url)).units.growth;
    const run = await b.run([...set, '--stale', 'verify', '--yes', '-o', 'leads.ndjson', '--summary', 's.json']);
    expect(run.code, run.stderr).toBe(0);
    const written = ndjsonRecords(await readFile(join(b.home, 'leads.ndjson'), 'utf8')).map(
      (row) => row.business_email,
    );
    expect(written).toEqual(leads.map((row) => row.business_email).filter((email) => email !== address));
    const after = await sandboxStats(sandbox.url);
    expect(after.units.growth).toBeGreaterThan(units);
    const newly = (after.verified_emails as string[]).filter((email) => !charged.has(email));
    expect(newly).not.toContain(address.toLowerCase());
    expect(JSON.parse(await readFile(join(b.home, 's.json'), 'utf8')).excluded.suppressed).toEqual({
      entries: 1,
      removed: 1,
    });
    // Machine B's own cache holds no suppression: the team store alone kept the address out.
    const list = await b.run(['forget', '--list']);
    expect(list.stdout).toContain("0 addresses suppressed in this machine's store");
    expect(list.stdout).toMatch(/1 address suppressed in the team store/);

    // A data-subject request after the erasure, on machine B: the run that exported the address is named.
    const provenance = await b.run(['provenance', address]);
    expect(provenance.code, provenance.stderr).toBe(0);
    expect(provenance.stdout).toContain(`${address}: exported by 1 run (the team store`);
    expect(provenance.stdout).toMatch(/job pg:weekly {2}host host-a {2}file week1\.ndjson/);
    const never = await b.run(['provenance', 'nobody.here@example.org']);
    expect(never.stdout).toMatch(/^nobody\.here@example\.org: never exported/);

    // No column yields the address without the key: neither its text nor an unkeyed digest of it.
    const stored = await everythingStored(db);
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    const digests = [sha(address.toLowerCase()), sha(address)];
    for (const form of [address, address.toLowerCase(), ...digests, ...digests.map((hex) => hex.slice(0, 24))])
      expect(
        stored.some((value) => value.includes(form)),
        form,
      ).toBe(false);
    const { rows } = await db.sql('SELECT email_hash, added_by FROM prospect.suppressed');
    expect(rows).toHaveLength(1);
    expect(rows[0].added_by).toBe('host-a');
  }, 120_000);
});
