// A throwaway PostgreSQL cluster for bench/state-store.js, started as test/helpers/postgres.ts starts the
// tests' one (initdb as the `postgres` user into a temporary directory, a free port and its own socket,
// fsync off) but owned by one bench process: that helper is TypeScript and tied to vitest's scratch root.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';

function binDir() {
  const found = spawnSync('sh', ['-c', 'command -v postgres'], { encoding: 'utf8' }).stdout.trim();
  if (found && existsSync(join(dirname(realpathSync(found)), 'pg_ctl'))) return dirname(realpathSync(found));
  const versions = readdirSync('/usr/lib/postgresql').sort().reverse();
  return join('/usr/lib/postgresql', versions[0], 'bin');
}

function asPostgres(command, args) {
  execFileSync('setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', command, ...args], {
    stdio: 'pipe',
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());

/** Starts a cluster: { dir, port, socketDir }. Stop it with stopCluster. */
export async function startCluster() {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'prospect-bench-pg-'));
  chmodSync(dir, 0o755);
  chownSync(dir, id('-u'), id('-g'));
  const data = join(dir, 'data');
  const socketDir = join(dir, 'socket');
  asPostgres('mkdir', ['-m', '700', socketDir]);
  writeFileSync(join(dir, 'pw'), 'postgres-bench-password\n', { mode: 0o644 });
  asPostgres(join(bin, 'initdb'), [
    ...['-D', data, '-U', 'postgres', '--pwfile', join(dir, 'pw')],
    ...['--auth-local=trust', '--auth-host=scram-sha-256', '--no-sync', '-E', 'UTF8', '--locale=C'],
  ]);
  const port = await freePort();
  const settings = ['listen_addresses=127.0.0.1', 'fsync=off', 'synchronous_commit=off', 'full_page_writes=off'];
  const options = [`-p ${port} -k ${socketDir}`, ...[...settings, 'max_connections=300'].map((s) => `-c ${s}`)].join(
    ' ',
  );
  asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
  return { dir, port, socketDir };
}

export function stopCluster({ dir }) {
  spawnSync(
    'setpriv',
    ['--reuid=postgres', '--regid=postgres', '--init-groups', join(binDir(), 'pg_ctl')].concat([
      '-D',
      join(dir, 'data'),
      '-m',
      'immediate',
      '-w',
      'stop',
    ]),
    { stdio: 'ignore' },
  );
  rmSync(dir, { recursive: true, force: true });
}

/** A database and a plain role that may create in it (as docs/team.md sets one up): its state URL. */
export async function benchDatabase({ socketDir, port }, name) {
  const role = `${name}_role`;
  const password = `pw-${name}-Secret`;
  const admin = new pg.Client({ host: socketDir, port, user: 'postgres', database: 'postgres' });
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.query(`GRANT CREATE, CONNECT ON DATABASE ${name} TO ${role}`);
  } finally {
    await admin.end();
  }
  return { url: `postgresql://${role}:${password}@127.0.0.1:${port}/${name}` };
}
