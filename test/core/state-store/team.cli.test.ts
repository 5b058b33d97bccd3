/**
 * Issue 35's promises across machines, each "machine" a spawned prospect with its own HOME, cache,
 * working directory and HOSTNAME, all on one real PostgreSQL server (test/helpers/postgres.ts) and
 * one sandbox whose unit counter is the money measured (never what prospect says it spent).
 * Runs a test needs as its reference, and the later runs of a test whose first run was spawned
 * (what they add is the rows, the exit code or the text main() writes), run the same main() in
 * process (runInProcess: the same environment, exit code and key-leak checks); the runs at once,
 * the runs killed and the resumes after a kill are spawned.
 */
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishCli, runCli, runInProcess, scratchDir, startCli, type CliRun } from '../../helpers/cli.js';
import { csvRecords } from '../../helpers/csv.js';
import { sandboxStats } from '../../helpers/independent-client.js';
import { adminClient, POSTGRES, testDatabase, type TestDatabase, TEST_TEAM_KEY } from '../../helpers/postgres.js';
import { SANDBOX_KEYS, startTestSandbox, todayUtc, type TestSandbox } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
let sandbox: TestSandbox;

beforeAll(async () => {
  if (POSTGRES.skip) return;
  // A sandbox of today, so paid results stay within --cache-ttl; one verify answer in six is cut
  // mid-body after it was charged: only the same Idempotency-Key on the retry makes it free.
  sandbox = await startTestSandbox({ asOf: todayUtc(), failRate: 0.15, faults: ['reset-mid-body'] });
});
afterAll(async () => {
  await sandbox?.close();
});

/** The sandbox's own count of the units charged, read in process (it is polled while runs go on). */
const units = () => sandbox.stats().units.growth;

/** A machine: its own HOME, working directory and host name. */
async function machine(name: string, db: TestDatabase) {
  const home = await scratchDir(`home-${name}-`);
  return {
    home,
    options: (extra: Record<string, string> = {}) => ({
      url: sandbox.url,
      apiKey: KEY,
      cwd: home,
      timeoutMs: 120_000,
      env: { HOME: home, HOSTNAME: name, PROSPECT_STATE_URL: db.url, PROSPECT_TEAM_KEY: TEST_TEAM_KEY, ...extra },
    }),
  };
}

/**
 * Every value of every table of prospect's schema, bytes as they are: what a role that may read the
 * database sees (bytea decoded, so that text kept in it would show).
 */
async function everythingStored(db: TestDatabase): Promise<string> {
  const { rows: tables } = await db.sql("SELECT tablename FROM pg_tables WHERE schemaname = 'prospect'");
  const parts: string[] = [];
  for (const { tablename } of tables as { tablename: string }[]) {
    const { rows } = await db.sql(`SELECT * FROM prospect.${tablename}`);
    for (const row of rows as Record<string, unknown>[])
      for (const value of Object.values(row))
        parts.push(Buffer.isBuffer(value) ? value.toString('latin1') : JSON.stringify(value));
  }
  return parts.join('\n');
}

/**
 * The hashes of the store that a reader with a dictionary holding `addresses` finds, by the schemes of
 * schema 2: sha256 of the ledger name (kept in the row) and the address, and sha256 of the address
 * alone, whole or cut to 12 bytes as lead keys were. Computed here, not by prospect.
 */
async function unkeyedMatches(db: TestDatabase, addresses: string[], leads: string[] = []): Promise<string[]> {
  const sha = (text: string) => createHash('sha256').update(text).digest();
  const { rows: ledgers } = await db.sql('SELECT DISTINCT ledger FROM prospect.verifications');
  const candidates = new Map<string, string>();
  for (const address of [...addresses, ...leads]) {
    for (const digest of [sha(address), sha(address).subarray(0, 12)]) candidates.set(digest.toString('hex'), address);
    for (const { ledger } of ledgers as { ledger: string }[])
      candidates.set(sha(`${ledger}\n${address}`).toString('hex'), address);
  }
  const { rows } = await db.sql(
    `SELECT email_hash AS h FROM prospect.verifications UNION ALL SELECT email_hash FROM prospect.claims
     UNION ALL SELECT key FROM prospect.exported`,
  );
  return (rows as { h: Buffer }[]).flatMap((row) => candidates.get(row.h.toString('hex')) ?? []);
}

/** Checks the state URL's password appears nowhere a person sees. */
function expectNoPassword(run: CliRun, db: TestDatabase): void {
  expect(run.stdout.includes(db.password)).toBe(false);
  expect(run.stderr.includes(db.password)).toBe(false);
}

describe.skipIf(POSTGRES.skip)('the team ledger: no unit paid twice across machines', () => {
  it('4 verify runs at once over overlapping lists, some killed and run again, pay one unit per address', async () => {
    const db = await testDatabase('verify4');
    // 240 addresses; each machine's list is 80 of them, overlapping its neighbours' by 20: every
    // address is asked by one or two machines, and the lists are long enough (10 rounds of 8 calls,
    // with cut answers retried after a backoff) that both kills below land mid-run.
    const all = Array.from({ length: 240 }, (_, i) => `person${i}@company${i % 97}.example.com`);
    const lists = [0, 60, 120, 180].map((start) => [...all, ...all].slice(start, start + 80));
    const union = new Set(lists.flat());
    const machines = await Promise.all(lists.map((_, i) => machine(`host-${i}`, db)));
    const files = await Promise.all(
      lists.map(async (list, i) => {
        const path = join(machines[i]!.home, 'list.csv');
        await writeFile(path, `email\n${list.join('\n')}\n`);
        return path;
      }),
    );
    const before = units();
    const args = (i: number) => ['verify', '--file', files[i]!, '--yes', '--concurrency', '8', '-o', 'out.csv'];
    const children = lists.map((_, i) => startCli(args(i), machines[i]!.options()));
    // Two of them are killed at different moments: once the sandbox has charged an eighth of the
    // union (about 9 of each list), then a third of it (about 27 of each list still running).
    const killed = [1, 3];
    const kills = killed.map(async (i, n) => {
      while (units() - before < 30 + 50 * n) await sleep(10);
      children[i]!.kill('SIGKILL');
    });
    const first = await Promise.all(children.map((child) => finishCli(child, {})));
    await Promise.all(kills);
    for (const [i, run] of first.entries()) {
      if (killed.includes(i)) expect(run.signal).toBe('SIGKILL');
      else expect(run.code, run.stderr).toBe(0);
    }
    // Run again on the same machines: they pay only for what nobody paid.
    const again = await Promise.all(killed.map((i) => runCli(args(i), machines[i]!.options())));
    for (const run of again) expect(run.code, run.stderr).toBe(0);
    expect(units() - before).toBe(union.size);
    // Every machine's output has every address answered.
    for (const i of [0, 1, 2, 3]) {
      const rows = csvRecords(await readFile(join(machines[i]!.home, 'out.csv'), 'utf8'));
      expect(rows).toHaveLength(80);
      expect(rows.filter((row) => row.verification === 'unchecked' || !row.verification)).toEqual([]);
    }
    const stored = await db.sql('SELECT count(*)::int AS n FROM prospect.verifications');
    expect(stored.rows[0].n).toBe(union.size);
    // Hashes only: no address is stored in the team database, nor a hash a reader could try guesses on.
    const dump = await db.sql("SELECT string_agg(v::text, ' ') AS t FROM prospect.verifications v");
    expect(dump.rows[0].t).not.toContain('person1@');
    expect(await unkeyedMatches(db, all)).toEqual([]);
  }, 120_000);
});

describe.skipIf(POSTGRES.skip)('pipeline --state pg:NAME', () => {
  // Three pages of ten companies: the kills below land after the first and the second.
  const ARGS = [
    '--page-size',
    '10',
    'pipeline',
    '-t',
    'jQuery',
    '--country',
    'us',
    '--seniority',
    'cxo',
    '--max',
    '30',
    '--stale',
    'verify',
    '--yes',
    '--concurrency',
    '4',
  ];

  /** The pages the job's unfinished run committed, read by `sql` (a session of its own while polling). */
  async function pagesDone(sql: TestDatabase['sql'], job: string): Promise<number> {
    const { rows } = await sql(`SELECT (checkpoint->>'pages_done')::int AS n FROM prospect.jobs WHERE name = $1`, [
      job,
    ]).catch(() => ({ rows: [] as Array<{ n: number }> }));
    return rows[0]?.n ?? 0;
  }

  async function killAfterPages(child: ChildProcess, db: TestDatabase, job: string, pages: number): Promise<void> {
    // One session for the polls: a connection every 10 ms costs more than the run it watches.
    const watch = await adminClient(db.name);
    try {
      while ((await pagesDone((text, values) => watch.query(text, values), job)) < pages && child.exitCode === null)
        await sleep(10);
    } finally {
      await watch.end();
    }
    child.kill('SIGKILL');
  }

  it('killed on machine A at several points, resumed on B: the bytes and the units of one clean run', async () => {
    const reference = await testDatabase('reference');
    const shared = await testDatabase('weekly');
    const clean = await machine('clean', reference);
    let before = units();
    // The reference, in process.
    const cleanRun = await runInProcess([...ARGS, '--state', 'pg:weekly', '-o', 'leads.csv'], clean.options());
    expect(cleanRun.code, cleanRun.stderr).toBe(0);
    const cleanUnits = units() - before;
    expect(cleanUnits).toBeGreaterThan(0);
    const expected = await readFile(join(clean.home, 'leads.csv'));

    before = units();
    for (const pages of [1, 2]) {
      const a = await machine(`machine-a-${pages}`, shared);
      const child = startCli([...ARGS, '--state', 'pg:weekly', '-o', 'leads.csv'], a.options());
      const killing = killAfterPages(child, shared, 'weekly', pages);
      const run = await finishCli(child, {});
      await killing;
      expect(run.signal, run.stderr).toBe('SIGKILL');
      expect(existsSync(join(a.home, 'leads.csv'))).toBe(false);
    }
    expect(await pagesDone((text, values) => shared.sql(text, values), 'weekly')).toBeGreaterThanOrEqual(2);
    // Killed twice mid-run: the committed pages are in the database, and no lead of them can be read there.
    const leads = csvRecords(expected.toString('utf8'));
    const emails = leads.map((row) => row.business_email!).filter((email) => email !== '');
    expect(emails.length).toBeGreaterThan(20);
    const stored = await everythingStored(shared);
    expect((await shared.sql('SELECT count(*)::int AS n FROM prospect.job_chunks')).rows[0].n).toBeGreaterThan(0);
    expect(emails.filter((email) => stored.includes(email))).toEqual([]);
    expect(leads.filter((row) => row.full_name && stored.includes(row.full_name))).toEqual([]);
    const b = await machine('machine-b', shared);
    await mkdir(join(b.home, 'elsewhere'));
    const resumed = await runCli([...ARGS, '--state', 'pg:weekly', '-o', 'elsewhere/leads-b.csv'], b.options());
    expect(resumed.code, resumed.stderr).toBe(0);
    // It resumed: the job's unfinished run is gone from the store only now that it succeeded.
    expect(await pagesDone((text, values) => shared.sql(text, values), 'weekly')).toBe(0);
    expect(await readFile(join(b.home, 'elsewhere', 'leads-b.csv'))).toEqual(expected);
    expect(units() - before).toBe(cleanUnits);
    // The lead keys of the finished run, tried as schema 2 kept them (email and domain), find nothing.
    const identities = leads.map((row) => `${row.business_email!.trim().toLowerCase()}|${row.domain!.toLowerCase()}`);
    expect((await shared.sql('SELECT count(*)::int AS n FROM prospect.exported')).rows[0].n).toBeGreaterThan(0);
    expect(await unkeyedMatches(shared, emails, identities)).toEqual([]);
    expectNoPassword(resumed, shared);
  }, 120_000);

  it('two runs of one job: the second exits 6 naming the holder; after SIGKILL of the holder a run starts at once', async () => {
    const db = await testDatabase('lock');
    const a = await machine('holder-host', db);
    const b = await machine('second-host', db);
    const LOCK_ARGS = ['pipeline', '-t', 'jQuery', '--country', 'us', '--seniority', 'cxo', '--max', '30'];
    const holder = startCli([...LOCK_ARGS, '--state', 'pg:daily', '-o', 'a.csv'], a.options());
    const watch = await adminClient(db.name);
    const holderHost = async () =>
      (await watch.query("SELECT holder_host FROM prospect.jobs WHERE name = 'daily'").catch(() => ({ rows: [] })))
        .rows[0]?.holder_host;
    while ((await holderHost()) !== 'holder-host') await sleep(10);
    await watch.end();
    // Held still: its session and lock stay while it is stopped.
    holder.kill('SIGSTOP');
    const started = Date.now();
    const second = await runCli([...LOCK_ARGS, '--state', 'pg:daily', '-o', 'b.csv'], b.options());
    const took = Date.now() - started;
    expect(second.code, second.stderr).toBe(6);
    expect(second.stderr).toMatch(/another pipeline run on holder-host \(pid \d+, started \d{4}-\d\d-\d\dT/);
    expect(existsSync(join(b.home, 'b.csv'))).toBe(false);
    console.log(`the second run exited 6 after ${took} ms (spawn included)`);
    holder.kill('SIGKILL');
    holder.kill('SIGCONT');
    await finishCli(holder, {});
    const third = await runCli([...LOCK_ARGS, '--state', 'pg:daily', '-o', 'b.csv'], b.options());
    expect(third.code, third.stderr).toBe(0);
  }, 120_000);

  it('--only-new from a second machine exports no lead the first exported', async () => {
    const db = await testDatabase('onlynew');
    const a = await machine('rep-a', db);
    const b = await machine('rep-b', db);
    const base = ['--page-size', '30', 'pipeline', '-t', 'jQuery', '--country', 'us', '--seniority', 'cxo'];
    const first = await runCli(
      [...base, '--max', '60', '--only-new', '--state', 'pg:rep-a', '-o', 'a.csv'],
      a.options(),
    );
    expect(first.code, first.stderr).toBe(0);
    // The second machine in process: what it adds is the rows it exports.
    const second = await runInProcess(
      [...base, '--max', '120', '--only-new', '--state', 'pg:rep-b', '-o', 'b.csv'],
      b.options(),
    );
    expect(second.code, second.stderr).toBe(0);
    const key = (row: Record<string, string>) => `${row.business_email}|${row.domain}|${row.full_name}`;
    const exportedByA = new Set(csvRecords(await readFile(join(a.home, 'a.csv'), 'utf8')).map(key));
    const exportedByB = csvRecords(await readFile(join(b.home, 'b.csv'), 'utf8')).map(key);
    expect(exportedByA.size).toBeGreaterThan(0);
    expect(exportedByB.length).toBeGreaterThan(0);
    expect(exportedByB.filter((lead) => exportedByA.has(lead))).toEqual([]);
  }, 120_000);
});

describe.skipIf(POSTGRES.skip)('failures', () => {
  it('the database unreachable: exit 5 before any contacts or verify call, the password shown nowhere', async () => {
    const db = await testDatabase('down');
    // A port nobody listens on: the database stopped.
    const downUrl = db.url.replace(`:${db.port}/`, ':1/');
    const a = await machine('down-host', db);
    const statsBefore = await sandboxStats(sandbox.url);
    const run = await runCli(
      [
        'pipeline',
        '-t',
        'jQuery',
        '--country',
        'us',
        '--stale',
        'verify',
        '--yes',
        '--state',
        'pg:weekly',
        '-o',
        'x.csv',
      ],
      a.options({ PROSPECT_STATE_URL: downUrl }),
    );
    expect(run.code, run.stderr).toBe(5);
    expect(run.stderr).toMatch(/cannot reach the state database postgresql:\/\/[^ ]*:\*\*\*@127\.0\.0\.1:1\//);
    expectNoPassword(run, db);
    const statsAfter = await sandboxStats(sandbox.url);
    expect(statsAfter.requests).toEqual(statsBefore.requests);
    expect(statsAfter.units).toEqual(statsBefore.units);
  });

  it('doctor checks the store: connection, TLS, privileges, schema; a newer schema is exit 2', async () => {
    const db = await testDatabase('doctor');
    const a = await machine('doctor-host', db);
    // doctor asks the service once a step: a sandbox without the file's cut answers, so only the store is tested.
    const clean = await startTestSandbox({ asOf: todayUtc() });
    const options = () => ({ ...a.options(), url: clean.url });
    const fresh = await runCli(['doctor'], options());
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(fresh.stdout).toMatch(/^state +postgresql:\/\/[^:]+:\*\*\*@127\.0\.0\.1:\d+\/\S+ \(sslmode=disable\)$/m);
    expect(fresh.stdout).toMatch(/^ok {2}connect +PostgreSQL 15\.\d+ as /m);
    expect(fresh.stdout).toMatch(/^ok {2}TLS +none: plaintext/m);
    expect(fresh.stdout).toMatch(/^ok {2}session +its own: the server sees this connection itself/m);
    expect(fresh.stdout).toMatch(/^ok {2}schema +none yet/m);
    expect(fresh.stdout).toMatch(/^ok {2}team key +the next run records which key writes the database$/m);
    expectNoPassword(fresh, db);
    // A run creates the schema (in process: set-up), then a newer prospect's version is refused.
    const { openPgStore } = await import('../../../src/core/state-store/pg/store.js');
    const { parseStateUrl } = await import('../../../src/config/state-url.js');
    await (await openPgStore(parseStateUrl(db.url), 'setup', TEST_TEAM_KEY)).close();
    const keyed = await runInProcess(['doctor'], options());
    expect(keyed.stdout).toMatch(/^ok {2}team key +the one the database was written with$/m);
    const otherKey = await runInProcess(['doctor'], {
      ...options(),
      env: { ...options().env, PROSPECT_TEAM_KEY: 'another-team-key-0123456789abcdef0123' },
    });
    expect(otherKey.code).toBe(2);
    expect(otherKey.stderr).toMatch(/the team key on this machine is not the one the state database was written with/);
    await db.sql('UPDATE prospect.meta SET version = version + 1');
    const newer = await runInProcess(['doctor'], options());
    await clean.close();
    expect(newer.code).toBe(2);
    expect(newer.stderr).toMatch(/newer prospect/);
  });

  it('a state URL without a team key, or with a short one: exit 2 before the database or the service', async () => {
    const db = await testDatabase('nokey');
    const a = await machine('nokey-host', db);
    const before = await sandboxStats(sandbox.url);
    // In process: the exit code and the text main() writes.
    const none = await runInProcess(['verify', 'ana@example.com', '--yes'], a.options({ PROSPECT_TEAM_KEY: '' }));
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^prospect: a state URL is set but no team key/);
    expect(none.stderr).toContain('openssl rand -base64 32 | prospect config set team-key');
    const short = await runInProcess(
      ['verify', 'ana@example.com', '--yes'],
      a.options({ PROSPECT_TEAM_KEY: 'short-Team-key' }),
    );
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/PROSPECT_TEAM_KEY: the team key has 14 characters, fewer than 32/);
    expect(short.stderr).not.toContain('short-Team-key');
    expect((await sandboxStats(sandbox.url)).requests).toEqual(before.requests);
    const schema = await db.sql("SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = 'prospect'");
    expect(schema.rows[0].n).toBe(0);
  });

  it('a wrong password: exit 2 naming the fix, the password shown nowhere', async () => {
    const db = await testDatabase('badpw');
    const a = await machine('badpw-host', db);
    const wrong = db.url.replace(db.password, 'not-the-Password');
    // In process: the exit code and the text main() writes (the unreachable database above is spawned).
    const run = await runInProcess(['verify', 'ana@example.com', '--yes'], a.options({ PROSPECT_STATE_URL: wrong }));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/refused the role/);
    expect(run.stderr).not.toContain('not-the-Password');
  });
});
