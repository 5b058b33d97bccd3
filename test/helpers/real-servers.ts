/**
 * Real programs in front of a sandbox, as a user's network puts them there: certificates made by
 * openssl (a CA of the test's own, and leaf certificates that are good, expired, not yet valid or for
 * another name), nginx as a TLS terminator, squid as a forward proxy. Each runs as the current user
 * on loopback ports chosen at run time, with its config, logs and pid file in a scratch directory,
 * in the foreground; stop() ends it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findProgram } from './programs.js';
import { scratchDir } from './scratch.js';

export const OPENSSL = findProgram('openssl');
export const NGINX = findProgram('nginx');
export const SQUID = findProgram('squid');

/** The one user of squid's second port, which asks for credentials (407) before anything else. */
export const PROXY_USER = 'sales-ops';
export const PROXY_PASSWORD = 's3cret-proxy-pass';
/** Debian's squid ships it; the test's own passwd file is made with `openssl passwd -apr1`. */
const BASIC_AUTH_HELPER = '/usr/lib/squid/basic_ncsa_auth';

/** A name that is not this machine's as written (so a proxy is used for it), which only squid resolves (to 127.0.0.1). */
export const PROXIED_HOST = 'api.prospect.test';

/** A free loopback port, chosen now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function openssl(args: string[], cwd: string): void {
  const result = spawnSync(OPENSSL.command, args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${result.stderr}`);
}

export interface Certificates {
  /** The test CA's certificate (PEM file), what ca-file names. */
  ca: string;
  /** Each leaf: its certificate and key files. */
  good: { cert: string; key: string };
  expired: { cert: string; key: string };
  notYetValid: { cert: string; key: string };
  wrongName: { cert: string; key: string };
}

/** `openssl ca` dates: YYYYMMDDHHMMSSZ. */
function certDate(offsetDays: number): string {
  return new Date(Date.now() + offsetDays * 86_400_000).toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
}

/** A CA and leaf certificates signed by it, made by openssl in `dir`. */
export async function makeCertificates(dir: string): Promise<Certificates> {
  await mkdir(join(dir, 'issued'), { recursive: true });
  await writeFile(join(dir, 'index.txt'), '');
  await writeFile(join(dir, 'serial'), '1000\n');
  await writeFile(
    join(dir, 'ca.cnf'),
    [
      '[ca]',
      'default_ca = test_ca',
      '[test_ca]',
      `dir = ${dir}`,
      'database = $dir/index.txt',
      'serial = $dir/serial',
      'new_certs_dir = $dir/issued',
      'certificate = $dir/ca.pem',
      'private_key = $dir/ca.key',
      'default_md = sha256',
      'policy = any',
      'copy_extensions = copy',
      'unique_subject = no',
      '[any]',
      'commonName = supplied',
      '',
    ].join('\n'),
  );
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '30',
      '-subj',
      '/CN=prospect test CA',
    ],
    dir,
  );
  const leaf = (name: string, altNames: string, from: number, to: number) => {
    openssl(
      [
        'req',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.csr`,
        '-subj',
        `/CN=${name}`,
        '-addext',
        `subjectAltName=${altNames}`,
      ],
      dir,
    );
    openssl(
      [
        'ca',
        '-batch',
        '-config',
        'ca.cnf',
        '-in',
        `${name}.csr`,
        '-out',
        `${name}.pem`,
        '-startdate',
        certDate(from),
        '-enddate',
        certDate(to),
      ],
      dir,
    );
    return { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
  };
  const ours = `IP:127.0.0.1,DNS:localhost,DNS:${PROXIED_HOST}`;
  return {
    ca: join(dir, 'ca.pem'),
    good: leaf('good', ours, -1, 20),
    expired: leaf('expired', ours, -20, -2),
    notYetValid: leaf('not-yet-valid', ours, 2, 20),
    wrongName: leaf('wrong-name', 'DNS:other.example', -1, 20),
  };
}

export interface RunningProgram {
  /** The program's log (nginx's error log at `info`, squid's access log). */
  log(): Promise<string>;
  stop(): Promise<void>;
}

async function waitForPort(port: number, child: ChildProcess, name: string, stderr: () => string): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    if (child.exitCode !== null) throw new Error(`${name} exited at start (${child.exitCode}): ${stderr()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createServer().listen(port, '127.0.0.1');
      socket.once('listening', () => socket.close(() => resolve(false)));
      socket.once('error', () => resolve(true));
    });
    if (open) return;
    await sleep(50);
  }
  throw new Error(`${name} did not listen on 127.0.0.1:${port}: ${stderr()}`);
}

function startForeground(
  command: string,
  args: string[],
  _name: string,
): { child: ChildProcess; stderr: () => string } {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let text = '';
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return { child, stderr: () => text.trim().slice(0, 2000) };
}

function stopper(child: ChildProcess): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.kill('SIGTERM');
    await Promise.race([closed, sleep(5000).then(() => child.kill('SIGKILL'))]);
    await closed;
  };
}

export interface TlsSite {
  port: number;
  cert: { cert: string; key: string };
  /** nginx's ssl_protocols; default TLSv1.2 TLSv1.3. */
  protocols?: string;
  /** Extra nginx directives for the server block. */
  extra?: string;
}

/**
 * One nginx (master_process off: no user switch, one process) terminating TLS on each site's port
 * and passing requests to `upstream` (a plain-http sandbox on loopback). Its error log, at `info`,
 * names every TLS handshake that failed.
 */
export async function startNginx(dir: string, upstream: string, sites: TlsSite[]): Promise<RunningProgram> {
  const servers = sites.map(
    (site) => `
    server {
      listen 127.0.0.1:${site.port} ssl;
      ssl_certificate ${site.cert.cert};
      ssl_certificate_key ${site.cert.key};
      ssl_protocols ${site.protocols ?? 'TLSv1.2 TLSv1.3'};
      ${site.protocols === 'TLSv1.1' ? 'ssl_ciphers DEFAULT:@SECLEVEL=0;' : ''}
      ${site.extra ?? ''}
      location / {
        proxy_pass ${upstream};
        proxy_http_version 1.1;
        proxy_set_header Connection "";
      }
    }`,
  );
  const child = await foregroundNginx(dir, {
    errorLevel: 'info',
    logging: `access_log ${join(dir, 'access.log')};`,
    sites: servers.join('\n'),
    ports: sites.map((site) => site.port),
  });
  return { log: () => readFile(join(dir, 'error.log'), 'utf8'), stop: stopper(child) };
}

/** nginx's `limit_req` in front of the sandbox, as a service's gateway limits a key. */
export interface RateLimitSite {
  port: number;
  /** `limit_req_zone`'s rate, e.g. `5r/s`. */
  rate: string;
  /** `limit_req`'s burst; 0 or absent: none. */
  burst?: number;
  /** Companies per page the sandbox is asked for whatever the client asks (`limit=`), to make a listing of many pages. */
  pageSize?: number;
}

/**
 * One plain-http nginx per call with `limit_req` on every site, answering 429 (no Retry-After) to a
 * request over the limit, as the most common real limiter does. Its access log, one line per
 * request, ends with the status: `log()` returns it.
 */
export async function startRateLimitingNginx(
  dir: string,
  upstream: string,
  sites: RateLimitSite[],
): Promise<RunningProgram> {
  const origin = new URL(upstream).host;
  const zones = sites.map((site, index) => `limit_req_zone $binary_remote_addr zone=z${index}:1m rate=${site.rate};`);
  const servers = sites.map(
    (site, index) => `
    server {
      listen 127.0.0.1:${site.port};
      limit_req zone=z${index}${site.burst ? ` burst=${site.burst}` : ''};
      limit_req_status 429;
      location / {
        set $query $args;
        ${site.pageSize ? `if ($args ~ "^(.*)limit=[0-9]+(.*)$") { set $query $1limit=${site.pageSize}$2; }` : ''}
        proxy_pass http://${origin}$uri$is_args$query;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
      }
    }`,
  );
  const child = await foregroundNginx(dir, {
    errorLevel: 'warn',
    logging: `log_format status '$msec $status';\n  access_log ${join(dir, 'access.log')} status;`,
    sites: [...zones, ...servers].join('\n  '),
    ports: sites.map((site) => site.port),
  });
  return { log: () => readFile(join(dir, 'access.log'), 'utf8').catch(() => ''), stop: stopper(child) };
}

/**
 * One nginx in the foreground under `dir` (master_process off: no user switch, one process), its
 * http block made of `logging` (a log_format comes before the access_log naming it) and `sites`;
 * resolves once every port listens.
 */
async function foregroundNginx(
  dir: string,
  config: { errorLevel: string; logging: string; sites: string; ports: number[] },
): Promise<ChildProcess> {
  await mkdir(join(dir, 'temp'), { recursive: true });
  const conf = join(dir, 'nginx.conf');
  const temp = join(dir, 'temp');
  await writeFile(
    conf,
    `daemon off;
master_process off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} ${config.errorLevel};
events { worker_connections 256; }
http {
  ${config.logging}
  client_body_temp_path ${temp};
  proxy_temp_path ${temp};
  fastcgi_temp_path ${temp};
  uwsgi_temp_path ${temp};
  scgi_temp_path ${temp};
  ${config.sites}
}
`,
  );
  const { child, stderr } = startForeground(
    NGINX.command,
    ['-p', dir, '-c', conf, '-e', join(dir, 'error.log')],
    'nginx',
  );
  for (const port of config.ports) await waitForPort(port, child, 'nginx', stderr);
  return child;
}

/**
 * Started as root, squid runs as its own user (cache_effective_user, "proxy" on Debian), which
 * must reach its directory (the scratch directories are private) and write its logs there.
 */
async function letSquidsUserIn(dir: string): Promise<void> {
  if (process.getuid?.() !== 0) return;
  await chmod(dir, 0o777);
  await chmod(join(dir, 'cache'), 0o777);
  for (let parent = dirname(dir); parent.startsWith(tmpdir()) && parent !== tmpdir(); parent = dirname(parent)) {
    await chmod(parent, (await stat(parent)).mode | 0o001);
  }
}

/**
 * One squid (-N: foreground, no daemon) on a free loopback port, allowing only clients from this
 * machine to connect (CONNECT included) to loopback destinations, never to `forbiddenPort`; its
 * second port (`authPort`) asks for PROXY_USER's credentials first. It resolves names from its own
 * hosts file (PROXIED_HOST is 127.0.0.1) and sends no DNS query off this machine. Its access log
 * names every request it handled.
 */
export async function startSquid(
  dir: string,
): Promise<RunningProgram & { port: number; url: string; authPort: number; forbiddenPort: number }> {
  const port = await freePort();
  const authPort = await freePort();
  const forbiddenPort = await freePort();
  await mkdir(join(dir, 'cache'), { recursive: true });
  await letSquidsUserIn(dir);
  await writeFile(join(dir, 'hosts'), `127.0.0.1 ${PROXIED_HOST} localhost\n`);
  const hash = spawnSync(OPENSSL.command, ['passwd', '-apr1', PROXY_PASSWORD], { encoding: 'utf8' }).stdout.trim();
  await writeFile(join(dir, 'passwd'), `${PROXY_USER}:${hash}\n`);
  const conf = join(dir, 'squid.conf');
  await writeFile(
    conf,
    `http_port 127.0.0.1:${port}
http_port 127.0.0.1:${authPort} name=authenticated
pid_filename ${join(dir, 'squid.pid')}
access_log stdio:${join(dir, 'access.log')}
cache_log ${join(dir, 'cache.log')}
cache_store_log none
coredump_dir ${join(dir, 'cache')}
cache deny all
cache_mem 8 MB
hosts_file ${join(dir, 'hosts')}
dns_nameservers 127.0.0.1
shutdown_lifetime 0 seconds
auth_param basic program ${BASIC_AUTH_HELPER} ${join(dir, 'passwd')}
auth_param basic realm prospect-test
acl this_machine src 127.0.0.0/8
acl loopback_destination dst 127.0.0.0/8
acl authenticated_port myportname authenticated
acl known_user proxy_auth REQUIRED
acl forbidden_port port ${forbiddenPort}
http_access deny !this_machine
http_access deny forbidden_port
http_access deny authenticated_port !known_user
http_access deny !loopback_destination
http_access allow this_machine
http_access deny all
`,
  );
  const { child, stderr } = startForeground(SQUID.command, ['-N', '-f', conf], 'squid');
  await waitForPort(port, child, 'squid', stderr);
  return {
    port,
    authPort,
    forbiddenPort,
    url: `http://127.0.0.1:${port}`,
    log: () => readFile(join(dir, 'access.log'), 'utf8').catch(() => ''),
    stop: stopper(child),
  };
}

/** The sandbox over https (nginx, a certificate of the test's own CA for PROXIED_HOST and 127.0.0.1), and squid in front. */
export interface HttpsBehindProxy {
  /** The test CA's certificate: what ca-file names. */
  caFile: string;
  /** nginx's TLS port. */
  tlsPort: number;
  squid: Awaited<ReturnType<typeof startSquid>>;
  stop(): Promise<void>;
}

export async function startHttpsBehindProxy(upstream: string): Promise<HttpsBehindProxy> {
  const dir = await scratchDir();
  const certs = await makeCertificates(join(dir, 'certs'));
  const tlsPort = await freePort();
  const nginx = await startNginx(join(dir, 'nginx'), upstream, [{ port: tlsPort, cert: certs.good }]);
  const squid = await startSquid(join(dir, 'squid'));
  return {
    caFile: certs.ca,
    tlsPort,
    squid,
    stop: async () => {
      await squid.stop();
      await nginx.stop();
    },
  };
}

/** A server that accepts TCP connections and never says a word (a black hole). */
export async function startBlackHole(): Promise<{ port: number; close(): Promise<void> }> {
  const held = new Set<Socket>();
  const server = createServer((socket) => {
    held.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => held.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * `openssl s_server` on 127.0.0.1:port with a leaf of the test CA: a TLS server whose handshake is
 * OpenSSL's own (`-Verify 1 -tls1_3` demands a client certificate after the handshake, as TLS 1.3 does).
 */
export async function startOpensslServer(
  port: number,
  cert: { cert: string; key: string },
  extra: string[],
): Promise<RunningProgram> {
  const args = ['s_server', '-accept', `127.0.0.1:${port}`, '-cert', cert.cert, '-key', cert.key, '-www', '-quiet'];
  const { child, stderr } = startForeground(OPENSSL.command, [...args, ...extra], 'openssl s_server');
  await waitForPort(port, child, 'openssl s_server', stderr);
  return { log: async () => stderr(), stop: stopper(child) };
}
