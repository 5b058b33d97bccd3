/**
 * A throwaway PostgreSQL cluster for the state-store tests: one per `vitest run`, started by the
 * first test file that asks (initdb as the `postgres` user into a temporary directory it can read,
 * on a free port and its own socket directory, serving TLS with a certificate for localhost and
 * 127.0.0.1 from a CA made by openssl), shared by the files after it, and stopped by the global teardown. Each file gets its own database and role, so none sees another's state.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { findProgram } from './programs.js';
import { freePort } from './real-servers.js';
import { scratchRoot } from './scratch.js';
import { createTeamDatabase, startPgCluster, stopPgCluster } from './pg-cluster.mjs';

export const POSTGRES = findProgram('postgres');
/** The team key of every test store (the state URL needs one; docs/team.md). */
export const TEST_TEAM_KEY = 'test-team-key-0123456789abcdef0123456789';
const OPENSSL = findProgram('openssl');

export interface PgCluster {
  dir: string;
  port: number;
  socketDir: string;
  /** The PEM file of the test CA that signed the server's certificate (TLS on TCP, for localhost and 127.0.0.1). */
  ca: string;
}

/** The file in the run's scratch root that names the running cluster (the global teardown stops it). */
export function clusterRecordPath(root: string): string {
  return join(root, 'pg-cluster.json');
}

let cluster: Promise<PgCluster> | undefined;

/** The run's cluster: started by the first caller of the run (a lock directory decides which), waited for by the others. */
export function testCluster(): Promise<PgCluster> {
  cluster ??= startOrJoin();
  return cluster;
}

async function startOrJoin(): Promise<PgCluster> {
  const record = clusterRecordPath(scratchRoot());
  const claim = `${record}.starting`;
  try {
    mkdirSync(claim);
  } catch {
    for (let waited = 0; waited < 60_000; waited += 50) {
      if (existsSync(record)) return JSON.parse(readFileSync(record, 'utf8')) as PgCluster;
      await sleep(50);
    }
    throw new Error('the test PostgreSQL cluster did not start within 60 s');
  }
  const started = await startCluster();
  writeFileSync(record, JSON.stringify(started));
  return started;
}

function startCluster(): Promise<PgCluster> {
  return startPgCluster({
    command: POSTGRES.command,
    password: 'postgres-test-password',
    tls: OPENSSL.command,
  }) as Promise<PgCluster>;
}

/** Stops the cluster a run started (the global teardown). */
export function stopCluster(root: string): void {
  const record = clusterRecordPath(root);
  if (!existsSync(record)) return;
  const { dir } = JSON.parse(readFileSync(record, 'utf8')) as PgCluster;
  stopPgCluster(dir, POSTGRES.command);
}

/** A superuser connection over the cluster's socket, for setting up and looking at what prospect wrote. */
export async function adminClient(database = 'postgres'): Promise<pg.Client> {
  const { socketDir, port } = await testCluster();
  const client = new pg.Client({ host: socketDir, port, user: 'postgres', database });
  await client.connect();
  return client;
}

export interface TestDatabase {
  /** The state URL for the file's role (plain, on loopback). */
  url: string;
  name: string;
  role: string;
  password: string;
  port: number;
  /** Runs SQL as the superuser in this database. */
  sql(text: string, values?: unknown[]): Promise<pg.QueryResult>;
}

/**
 * A fresh database and a plain role that owns nothing but may create in it, as docs/team.md sets one up.
 * Its name ends in random bytes, not a count kept in this module: a file's vi.resetModules() loads the
 * module afresh for the files after it in the worker, and a count restarted there named a role twice.
 */
export async function testDatabase(prefix: string): Promise<TestDatabase> {
  const { port } = await testCluster();
  const name = `${prefix}_${randomBytes(6).toString('hex')}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const admin = await adminClient();
  const { role, password, url } = await createTeamDatabase(admin, name, port).finally(() => admin.end());
  return {
    url,
    name,
    role,
    password,
    port,
    async sql(text, values) {
      const client = await adminClient(name);
      try {
        return await client.query(text, values);
      } finally {
        await client.end();
      }
    },
  };
}

export const PGBOUNCER = findProgram('pgbouncer');

export interface PgBouncer {
  port: number;
  /** The URL of `db`'s role through the pool named `mode` (each pool mode is a database of its own). */
  url(mode: 'transaction' | 'session' | 'statement'): string;
  stop(): Promise<void>;
}

/**
 * A real PgBouncer in front of the test cluster for `db`: one database alias per pool mode, SCRAM for
 * its clients and the server, on a free loopback port, in the foreground as the `postgres` user (it
 * refuses to run as root), with its config in a temporary directory that user can read.
 */
export async function startPgBouncer(db: TestDatabase, settings: string[] = []): Promise<PgBouncer> {
  const dir = mkdtempSync(join(tmpdir(), 'prospect-pgbouncer-'));
  const port = await freePort();
  const modes = ['transaction', 'session', 'statement'] as const;
  writeFileSync(join(dir, 'userlist.txt'), `"${db.role}" "${db.password}"\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      ...modes.map((mode) => `${mode} = host=127.0.0.1 port=${db.port} dbname=${db.name} pool_mode=${mode}`),
      '[pgbouncer]',
      ...['listen_addr = 127.0.0.1', `listen_port = ${port}`, 'unix_socket_dir =', 'auth_type = scram-sha-256'],
      ...[`auth_file = ${join(dir, 'userlist.txt')}`, 'default_pool_size = 10', 'max_client_conn = 100'],
      ...settings,
      '',
    ].join('\n'),
  );
  chmodSync(dir, 0o755);
  const child = spawn(
    'setpriv',
    ['--reuid=postgres', '--regid=postgres', '--init-groups', PGBOUNCER.command, join(dir, 'pgbouncer.ini')],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitForPort(port, exited, () => log);
  return {
    port,
    url: (mode) => `postgresql://${db.role}:${db.password}@127.0.0.1:${port}/${mode}`,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPort(port: number, exited: Promise<void>, log: () => string): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  for (let waited = 0; waited < 10_000; waited += 20) {
    if (gone) throw new Error(`pgbouncer exited: ${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await sleep(20);
  }
  throw new Error(`pgbouncer did not listen on ${port} within 10 s: ${log()}`);
}
