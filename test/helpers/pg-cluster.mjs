// Starting and stopping a throwaway PostgreSQL cluster: initdb as the `postgres` user into a temporary directory
// it can read, on a free port and its own socket directory, fsync off; with `tls`, serving TLS on TCP with a
// certificate for localhost and 127.0.0.1 from a CA made by openssl for it. Plain JavaScript, so that
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

/** A CA and a server certificate it signed (EC P-256: made in milliseconds), the key readable by postgres only. */
function makeServerCertificate(dir, openssl) {
  const run = (args) => execFileSync(openssl, args, { cwd: dir, stdio: 'pipe' });
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '7'];
  run(['req', '-x509', ...key, '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', '/CN=prospect test PostgreSQL CA']);
  run([
    ...['req', '-x509', ...key, '-keyout', 'server.key', '-out', 'server.pem', '-subj', '/CN=localhost'],
    ...['-CA', 'ca.pem', '-CAkey', 'ca.key', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'],
  ]);
  chownSync(join(dir, 'server.key'), id('-u'), id('-g'));
  chmodSync(join(dir, 'server.key'), 0o600);
  return { ca: join(dir, 'ca.pem'), cert: join(dir, 'server.pem'), key: join(dir, 'server.key') };
}

const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());

/**
 * Starts a cluster whose superuser `postgres` has `password` over TCP (trust on the socket). With `tls` (the
 * openssl command), it also serves TLS and listens on 127.0.0.2, an address of this machine that its
 * certificate does not name; `ca` is the PEM file of the CA that signed it.
 */
export async function startPgCluster({ command = 'postgres', password, prefix = 'prospect-pg-', tls }) {
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
  const settings = ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off', 'max_connections=300'];
  const certificate = tls ? makeServerCertificate(dir, tls) : undefined;
  if (certificate)
    settings.push(
      'listen_addresses=127.0.0.1,127.0.0.2',
      ...['ssl=on', `ssl_cert_file=${certificate.cert}`, `ssl_key_file=${certificate.key}`],
    );
  else settings.push('listen_addresses=127.0.0.1');
  const options = [`-p ${port} -k ${socketDir}`, ...settings.map((s) => `-c ${s}`)];
  asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-o', options.join(' '), '-l', join(dir, 'log'), '-w', 'start']);
  return { dir, port, socketDir, ...(certificate ? { ca: certificate.ca } : {}) };
}

/**
 * A database `name` and a plain role that may create in it (as docs/team.md sets one up), made by the
 * superuser client `admin` (which the caller ends): the role, its password and the state URL over TCP.
 */
export async function createTeamDatabase(admin, name, port) {
  const role = `${name}_role`;
  const password = `pw-${name}-Secret`;
  await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.query(`GRANT CREATE, CONNECT ON DATABASE ${name} TO ${role}`);
  return { role, password, url: `postgresql://${role}:${password}@127.0.0.1:${port}/${name}` };
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
