/**
 * A pooler between prospect and the team database, with a real PgBouncer in front of the test
 * cluster: in transaction or statement mode it shares server sessions, which a job's session lock and
 * the address claims cannot live with, so the store refuses it (exit 2) before anything; in session
 * mode the store works, lock included. In process: the store a run opens, and main() for the exit
 * code, the doctor report and the proof that the service was not called.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseStateUrl } from '../../../../src/config/state-url.js';
import { LockedError } from '../../../../src/core/state-store/lock.js';
import { backendOf, sessionPath } from '../../../../src/core/state-store/pg/pooler.js';
import { PgSession } from '../../../../src/core/state-store/pg/session.js';
import { openPgStore } from '../../../../src/core/state-store/pg/store.js';
import type { LocalRunFiles } from '../../../../src/core/state-store/types.js';
import { CliError, ExitCode } from '../../../../src/exit-codes.js';
import { withoutPassword } from '../../../../src/util/redact.js';
import { runInProcess } from '../../../helpers/cli.js';
import {
  PGBOUNCER,
  POSTGRES,
  startPgBouncer,
  testDatabase,
  type PgBouncer,
  type TestDatabase,
  TEST_TEAM_KEY,
} from '../../../helpers/postgres.js';
import { scratchDir } from '../../../helpers/scratch.js';
import { startScriptedServer, type ScriptedServer } from '../../../helpers/scripted-server.js';

const skip = POSTGRES.skip || PGBOUNCER.skip;
let db: TestDatabase;
/** PgBouncer as it ships: an idle server session goes to the next client last in, first out. */
let lifo: PgBouncer;
/** server_round_robin: the idle session that waited longest goes first. */
let roundRobin: PgBouncer;

beforeAll(async () => {
  if (skip) return;
  db = await testDatabase('pooler');
  [lifo, roundRobin] = await Promise.all([startPgBouncer(db), startPgBouncer(db, ['server_round_robin = 1'])]);
});
afterAll(async () => {
  await Promise.all([lifo?.stop(), roundRobin?.stop()]);
});

/**
 * Leaves at least `count` idle server sessions in the pool, so which one a client gets is the pooler's
 * choice: each client holds a transaction (a server session of its own) until all have one. A
 * statement pool refuses transaction blocks; there the clients overlap in a statement instead.
 */
async function warm(url: string, count: number): Promise<void> {
  const clients = Array.from({ length: count }, () => new pg.Client({ connectionString: url }));
  for (const client of clients) client.on('error', () => {});
  try {
    await Promise.all(clients.map((client) => client.connect()));
    if (url.endsWith('/statement')) {
      await Promise.all(clients.map((client) => client.query('SELECT pg_sleep(0.05)')));
      return;
    }
    await Promise.all(clients.map((client) => client.query('BEGIN')));
    await Promise.all(clients.map((client) => client.query('COMMIT')));
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
}

/** The server sessions of `db`'s role that PgBouncer keeps idle. */
async function idleServerSessions(): Promise<number> {
  const { rows } = await db.sql(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1 AND state = 'idle'",
    [db.role],
  );
  return (rows[0] as { n: number }).n;
}

async function refusal(url: string): Promise<CliError> {
  const error = await openPgStore(parseStateUrl(url), 'pooled', TEST_TEAM_KEY).then(
    async (store) => {
      await store.close();
      return 'opened';
    },
    (caught: unknown) => caught,
  );
  expect(error, `${withoutPassword(url)}: ${String(error)}`).toBeInstanceOf(CliError);
  expect((error as CliError).message).not.toContain(db.password);
  return error as CliError;
}

/** The server process of the store opened with `host` (PgBouncer passes the application name on). */
async function backendPidOf(host: string): Promise<number> {
  const { rows } = await db.sql('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [`prospect ${host}`]);
  expect(rows).toHaveLength(1);
  return (rows[0] as { pid: number }).pid;
}

/** Waits until PgBouncer has reset a server session its client left, and so put it back in the pool. */
async function serverSessionReset(pid: number): Promise<void> {
  const reset = "SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'idle' AND query = 'DISCARD ALL'";
  while ((await db.sql(reset, [pid])).rows.length === 0) await sleep(10);
}

const noFiles = { outputPath: '', rowsPath: '', keysPath: '' } as unknown as LocalRunFiles;

describe.skipIf(skip)('a pooler that shares server sessions is refused', () => {
  it('transaction and statement mode, last-in-first-out and round-robin, with idle sessions to choose from', async () => {
    for (const bouncer of [lifo, roundRobin])
      for (const mode of ['transaction', 'statement'] as const) {
        await warm(bouncer.url(mode), 3);
        const error = await refusal(bouncer.url(mode));
        expect(error.exitCode, `${withoutPassword(bouncer.url(mode))}: ${error.message}`).toBe(ExitCode.usage);
        expect(error.message).toBe(
          `the state database at 127.0.0.1:${bouncer.port} is reached through a pooler in transaction or ` +
            "statement mode, which shares one server session among its clients: a job's lock and the address " +
            'claims need their own.',
        );
        expect(error.hint).toMatch(/^Connect to PostgreSQL directly, or to a pool in session mode/);
      }
  });

  it('round-robin transaction mode with exactly two idle server sessions, which turns about alone miss', async () => {
    // Its own pool: two server connections at most, so the check's two clients could alternate between them.
    const two = await startPgBouncer(db, ['server_round_robin = 1', 'default_pool_size = 2']);
    try {
      await warm(two.url('transaction'), 2);
      expect(await idleServerSessions()).toBeGreaterThanOrEqual(2);
      const error = await refusal(two.url('transaction'));
      expect(error.exitCode, error.message).toBe(ExitCode.usage);
      expect(error.message).toMatch(/pooler in transaction or statement mode/);
    } finally {
      await two.stop();
    }
  });

  it('statement mode is refused even when the second connection cannot be made', async () => {
    // A probe that fails, as one too slow on a loaded machine does: the turns about learn nothing.
    const noProbe = () => Promise.reject(new Error('no second connection'));
    const pathThrough = async (url: string) => {
      const client = new pg.Client({ connectionString: url });
      client.on('error', () => {});
      await client.connect();
      try {
        return await sessionPath(client, await backendOf(client), noProbe);
      } finally {
        await client.end().catch(() => {});
      }
    };
    expect(await pathThrough(lifo.url('statement'))).toBe('shared');
    expect(await pathThrough(lifo.url('session'))).toBe('unknown');
  });

  it('a check that cannot decide is a refusal: a session pool with no server left for the second connection', async () => {
    // One server connection a pool, and a client that waits for one gives up after a second: the check's
    // second connection gets no server session while the first holds the only one.
    const full = await startPgBouncer(db, ['default_pool_size = 1', 'query_wait_timeout = 1']);
    try {
      const error = await refusal(full.url('session'));
      expect(error.exitCode, error.message).toBe(ExitCode.usage);
      expect(error.message).toBe(
        `the state database at 127.0.0.1:${full.port} is reached through something that relays the connection ` +
          "(a pooler, a proxy), and prospect could not tell whether it keeps this connection's server session: " +
          'a second connection got none within 10 s.',
      );
      expect(error.hint).toMatch(/^Connect to PostgreSQL itself, not through the pooler/);
    } finally {
      await full.stop();
    }
  });

  describe('through main()', () => {
    // The service is a recorder that answers 500: any request prospect sent would be in its list.
    let service: ScriptedServer;
    beforeAll(async () => {
      service = await startScriptedServer([{ status: 500 }]);
    });
    afterAll(async () => {
      await service?.close();
    });

    const run = async (args: string[], stateUrl: string) => {
      const home = await scratchDir();
      return runInProcess(args, {
        url: service.url,
        apiKey: 'pk_test_pooler_000000000',
        cwd: home,
        env: { HOME: home, HOSTNAME: 'pooled-host', PROSPECT_STATE_URL: stateUrl, PROSPECT_TEAM_KEY: TEST_TEAM_KEY },
      });
    };

    it('verify: exit 2 in two lines before any call to the service; doctor says it', async () => {
      // The recorder is shared: the session-mode doctor below may have run first (--sequence.shuffle).
      const before = service.requests.length;
      const verify = await run(['verify', 'ana@example.com', '--yes'], lifo.url('transaction'));
      expect(verify.code, verify.stderr).toBe(ExitCode.usage);
      expect(verify.stderr.trimEnd().split('\n')).toHaveLength(2);
      expect(verify.stderr).toMatch(/pooler in transaction or statement mode/);
      expect(verify.stderr).not.toContain(db.password);
      const doctor = await run(['doctor'], lifo.url('transaction'));
      expect(doctor.code, doctor.stderr).toBe(ExitCode.usage);
      expect(doctor.stdout).toMatch(
        /^FAIL connect +the state database at 127\.0\.0\.1:\d+ is reached through a pooler/m,
      );
      expect(service.requests.slice(before)).toEqual([]);
    });

    it('doctor through a session-mode pool: the session is its own', async () => {
      // Only the store's lines matter here: the service's checks that follow fail on the recorder's 500.
      const doctor = await run(['doctor'], lifo.url('session'));
      expect(doctor.stdout).toMatch(/^ok {2}connect +PostgreSQL 15/m);
      expect(doctor.stdout).toMatch(/^ok {2}session +its own: something relays the connection/m);
    });
  });
});

describe.skipIf(skip)('a session-mode pool works', () => {
  it('the search_path is set after connecting, which a pool passes on (the startup options it refuses)', async () => {
    const session = await PgSession.connect(parseStateUrl(lifo.url('session')), 'pooled search_path');
    try {
      const { rows } = await session.query('SHOW search_path');
      expect(rows).toEqual([{ search_path: 'prospect, pg_catalog, pg_temp' }]);
    } finally {
      await session.close();
    }
  });

  it("a job's lock holds across statements, refuses a second run (exit 6), and goes with its client", async () => {
    const open = (host: string) => openPgStore(parseStateUrl(lifo.url('session')), host, TEST_TEAM_KEY);
    const first = await open('lock-first');
    await first.job('weekly').lock('pipeline', noFiles);
    const firstPid = await backendPidOf('lock-first');
    const second = await open('lock-second');
    // Clients coming and going in between, any of which a transaction pool would have given that session.
    for (let i = 0; i < 5; i += 1) await (await open('lock-other')).close();
    const refused = await second
      .job('weekly')
      .lock('pipeline', noFiles)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(LockedError);
    expect((refused as LockedError).exitCode).toBe(ExitCode.locked);
    // The holder's client goes: PgBouncer resets its server session (DISCARD ALL), which frees the lock.
    await first.close();
    await serverSessionReset(firstPid);
    await second.job('weekly').lock('pipeline', noFiles);
    await second.close();
  });

  it("a dead holder's claim is taken over by the next client its server session goes to, before the lease ends", async () => {
    const url = parseStateUrl(lifo.url('session'));
    const holder = await openPgStore(url, 'claim-holder', TEST_TEAM_KEY);
    const ledger = await holder.openVerificationLedger('pooled', { freshSince: new Date(0) });
    await ledger.claim('ana@example.com', 'token-a');
    const held = (await db.sql('SELECT holder_pid, lease_until FROM prospect.claims')).rows[0] as {
      holder_pid: number;
      lease_until: Date;
    };
    // The holder's process dies; PgBouncer keeps its server session (pid and all) for the next client.
    await holder.close();
    await serverSessionReset(held.holder_pid);
    const next = await openPgStore(url, 'claim-next', TEST_TEAM_KEY);
    expect(await backendPidOf('claim-next')).toBe(held.holder_pid);
    const taken = await (
      await next.openVerificationLedger('pooled', { freshSince: new Date(0) })
    ).claim('ana@example.com', 'b');
    expect(taken.token).toBe('token-a');
    // Taken over because its holder is gone, not because its lease ran out.
    const check = await db.sql('SELECT now() < $1 AS early', [held.lease_until]);
    expect(check.rows).toEqual([{ early: true }]);
    await next.close();
  });
});
