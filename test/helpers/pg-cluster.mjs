// Starting and stopping a throwaway PostgreSQL cluster: initdb as the `postgres` user into a temporary directory
// it can read, on a free port and its own socket directory, fsync off. Plain JavaScript, so that
// test/helpers/postgres.ts and the bench (bench/state-store.js, plain Node) start theirs the same way.
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

/** The directory of initdb and pg_ctl: beside `command` (a postgres found on PATH), else the newest Debian one. */
function binDir(command) {
  const found = realpathSync(
    spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim() || command,
  );
  if (existsSync(join(dirname(found), 'pg_ctl'))) return dirname(found);
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

/** Starts a cluster whose superuser `postgres` has `password` over TCP (trust on the socket). */
export async function startPgCluster({ command = 'postgres', password, prefix = 'prospect-pg-' }) {
  const bin = binDir(command);
  // Outside any scratch root private to root: the server runs as postgres.
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  chownSync(dir, id('-u'), id('-g'));
  const data = join(dir, 'data');
  const socketDir = join(dir, 'socket');
  asPostgres('mkdir', ['-m', '700', socketDir]);
  writeFileSync(join(dir, 'pw'), `${password}\n`, { mode: 0o644 });
  asPostgres(join(bin, 'initdb'), [
    ...['-D', data, '-U', 'postgres', '--pwfile', join(dir, 'pw')],
    ...['--auth-local=trust', '--auth-host=scram-sha-256', '--no-sync', '-E', 'UTF8', '--locale=C'],
  ]);
  const port = await freePort();
  const settings = ['listen_addresses=127.0.0.1', 'fsync=off', 'synchronous_commit=off', 'full_page_writes=off'];
  const options = [`-p ${port} -k ${socketDir}`, ...[...settings, 'max_connections=300'].map((s) => `-c ${s}`)];
  asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-o', options.join(' '), '-l', join(dir, 'log'), '-w', 'start']);
  return { dir, port, socketDir };
}

/** Stops a cluster at once (no checkpoint: it is thrown away) and removes its directory. */
export function stopPgCluster(dir, command = 'postgres') {
  spawnSync(
    'setpriv',
    ['--reuid=postgres', '--regid=postgres', '--init-groups', join(binDir(command), 'pg_ctl')].concat([
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
