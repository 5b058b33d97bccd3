/**
 * TLS a user can fix (issue 27): the sandbox behind nginx, with certificates made by openssl. An
 * untrusted CA, an expired certificate, one not yet valid, one for another name, and a server that
 * offers only TLS 1.1 each end the run with exit 5 after one attempt (the client's --debug log shows
 * one; nginx logs the failed handshake; the sandbox sees no request), in a line that says what is
 * wrong and a line that says how to fix it. With ca-file naming the test CA, the same run succeeds.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir } from '../helpers/cli.js';
import {
  freePort,
  makeCertificates,
  NGINX,
  OPENSSL,
  startNginx,
  startOpensslServer,
  type Certificates,
  type RunningProgram,
} from '../helpers/real-servers.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
const COMPANIES = ['companies', '-t', 'Shopify', '--max', '3', '--columns', 'domain', '--format', 'csv'];

describe.skipIf(NGINX.skip || OPENSSL.skip)('TLS in front of the sandbox (nginx, openssl)', () => {
  let sandbox: RunningSandbox;
  let nginx: RunningProgram;
  let certs: Certificates;
  /** openssl s_server demanding a client certificate under TLS 1.3: it says so only after the handshake. */
  let tls13: RunningProgram;
  let tls13Port: number;
  const port: Record<'good' | 'expired' | 'notYetValid' | 'wrongName' | 'tls11' | 'clientCert', number> = {
    good: 0,
    expired: 0,
    notYetValid: 0,
    wrongName: 0,
    tls11: 0,
    clientCert: 0,
  };

  beforeAll(async () => {
    // 2,000 companies: three Shopify shops is all a run here lists.
    sandbox = await startTestSandbox({ companies: 2_000 });
    const dir = await scratchDir();
    certs = await makeCertificates(join(dir, 'certs'));
    for (const name of Object.keys(port) as Array<keyof typeof port>) port[name] = await freePort();
    nginx = await startNginx(join(dir, 'nginx'), sandbox.url, [
      { port: port.good, cert: certs.good },
      { port: port.expired, cert: certs.expired },
      { port: port.notYetValid, cert: certs.notYetValid },
      { port: port.wrongName, cert: certs.wrongName },
      { port: port.tls11, cert: certs.good, protocols: 'TLSv1.1' },
      { port: port.clientCert, cert: certs.good, extra: `ssl_verify_client on; ssl_client_certificate ${certs.ca};` },
    ]);
    tls13Port = await freePort();
    tls13 = await startOpensslServer(tls13Port, certs.good, ['-Verify', '1', '-tls1_3']);
  });
  afterAll(async () => {
    await tls13?.stop();
    await nginx?.stop();
    await sandbox?.close();
  });

  /** The handshakes nginx saw fail on this port (its error log at `info` names the server's address). */
  async function failedHandshakes(onPort: number): Promise<number> {
    const log = await nginx.log();
    return log
      .split('\n')
      .filter(
        (line) =>
          /SSL_do_handshake\(\) failed|SSL_read\(\) failed|handshak/i.test(line) &&
          line.includes(`server: 127.0.0.1:${onPort}`),
      ).length;
  }

  const CASES: Array<{ name: string; site: keyof typeof port; caFile: boolean; what: RegExp; fix: RegExp }> = [
    {
      name: 'an untrusted CA',
      site: 'good',
      caFile: false,
      what: /its certificate is not trusted/,
      fix: /ca-file .*PROSPECT_CA_FILE.*NODE_EXTRA_CA_CERTS/,
    },
    {
      name: 'an expired certificate',
      site: 'expired',
      caFile: true,
      what: /its certificate has expired \(TLS: CERT_HAS_EXPIRED\)/,
      fix: /renew its certificate.*clock/,
    },
    {
      name: 'a certificate not yet valid',
      site: 'notYetValid',
      caFile: true,
      what: /its certificate is not valid yet \(TLS: CERT_NOT_YET_VALID\)/,
      fix: /clock/,
    },
    {
      name: 'a certificate for another name',
      site: 'wrongName',
      caFile: true,
      what: /its certificate is for another host name \(TLS: ERR_TLS_CERT_ALTNAME_INVALID\)/,
      fix: /host name the certificate names/,
    },
    {
      name: 'TLS 1.1 only',
      site: 'tls11',
      caFile: true,
      what: /it offers only TLS older than 1\.2/,
      fix: /TLS 1\.2 or 1\.3/,
    },
  ];

  /**
   * The first case's plain run is spawned, to show the binary exits the same; the other runs of the
   * file run main() in process (TLS is the network's, not the process's), except the last test's.
   */
  it.for(CASES)(
    '$name: exit 5 after one attempt, what is wrong and how to fix it',
    async ({ name, site, caFile, what, fix }) => {
      const before = sandbox.stats().requests.total;
      const handshakesBefore = await failedHandshakes(port[site]);
      const options = {
        url: `https://127.0.0.1:${port[site]}`,
        apiKey: KEY,
        env: caFile ? { PROSPECT_CA_FILE: certs.ca } : {},
      };
      const run = await (name === CASES[0]!.name ? runCli : runInProcess)(COMPANIES, options);
      expect(run.code).toBe(5);
      expect(run.stdout).toBe('');
      const lines = run.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(new RegExp(`^prospect: cannot trust the service at 127\\.0\\.0\\.1:${port[site]}: `));
      expect(lines[0]).toMatch(what);
      expect(lines[1]).toMatch(fix);
      // One attempt, as the client logs them (--debug) ...
      const debugged = await runInProcess(['--debug', ...COMPANIES], options);
      expect(debugged.code).toBe(5);
      expect([...debugged.stderr.matchAll(/^debug: GET .* attempt (\d+)/gm)].map((match) => match[1])).toEqual(['1']);
      // ... and as nginx saw it: a failed handshake (logged when nginx gets to it), and no request reached the service.
      for (let tries = 0; tries < 100 && (await failedHandshakes(port[site])) === handshakesBefore; tries++)
        await sleep(50);
      expect(await failedHandshakes(port[site])).toBeGreaterThan(handshakesBefore);
      expect(sandbox.stats().requests.total).toBe(before);
    },
  );

  it('with ca-file naming the CA (PROSPECT_CA_FILE, or the config file), the same run succeeds', async () => {
    const url = `https://127.0.0.1:${port.good}`;
    const plain = await runInProcess(COMPANIES, { url: sandbox.url, apiKey: KEY });
    expect(plain.code).toBe(0);
    const byEnv = await runInProcess(COMPANIES, { url, apiKey: KEY, env: { PROSPECT_CA_FILE: certs.ca } });
    expect(byEnv.stderr).toBe(plain.stderr);
    expect(byEnv.code).toBe(0);
    expect(byEnv.stdout).toBe(plain.stdout);
    const config = join(await scratchDir(), 'config');
    const set = await runInProcess(['config', 'set', 'ca-file', certs.ca], { env: { PROSPECT_CONFIG_DIR: config } });
    expect(set.code).toBe(0);
    const byConfig = await runInProcess(COMPANIES, { url, apiKey: KEY, env: { PROSPECT_CONFIG_DIR: config } });
    expect(byConfig.code).toBe(0);
    expect(byConfig.stdout).toBe(plain.stdout);
  });

  it('a service that asks for a client certificate is refused with a message that says so (exit 5, no retry)', async () => {
    const before = sandbox.stats().requests.total;
    const run = await runInProcess(COMPANIES, {
      url: `https://127.0.0.1:${port.clientCert}`,
      apiKey: KEY,
      env: { PROSPECT_CA_FILE: certs.ca },
    });
    expect(run.code).toBe(5);
    expect(run.stderr).toBe(
      'prospect: the service at this base URL asks for a client certificate, which prospect does not send (400: No required SSL certificate was sent)\n' +
        'prospect does not support client certificates; ask for API-key access without one, or reach the service another way.\n',
    );
    expect(sandbox.stats().requests.total).toBe(before);
  });

  it('SSL_CERT_FILE replaces the trusted CAs, as gh reads it', async () => {
    const url = `https://127.0.0.1:${port.good}`;
    const run = await runInProcess(COMPANIES, { url, apiKey: KEY, env: { SSL_CERT_FILE: certs.ca } });
    expect(run.code).toBe(0);
    expect(run.stdout.split('\n')[0]).toBe('domain');
  });

  it('a ca-file that holds no certificate stops the run before any request (exit 2), naming the file', async () => {
    const before = sandbox.stats().requests.total;
    const run = await runInProcess(COMPANIES, {
      url: `https://127.0.0.1:${port.good}`,
      apiKey: KEY,
      env: { PROSPECT_CA_FILE: certs.good.key },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`the CA file ${certs.good.key}, set by PROSPECT_CA_FILE, holds no PEM certificate`);
    expect(sandbox.stats().requests.total).toBe(before);
  });

  it('TLS 1.3 asking for a client certificate after the handshake: one attempt, exit 5, saying so', async () => {
    const run = await runInProcess(['--debug', ...COMPANIES], {
      url: `https://127.0.0.1:${tls13Port}`,
      apiKey: KEY,
      env: { PROSPECT_CA_FILE: certs.ca },
    });
    expect(run.code).toBe(5);
    expect([...run.stderr.matchAll(/^debug: GET .* attempt (\d+)/gm)].map((match) => match[1])).toEqual(['1']);
    expect(run.stderr).toMatch(
      new RegExp(
        `prospect: cannot connect to the service at 127\\.0\\.0\\.1:${tls13Port}: it asks for a client certificate, ` +
          'which prospect does not send \\(TLS: ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED\\)',
      ),
    );
    expect(run.stderr).not.toMatch(/connection closed/);
  });

  it('a ca-file with a broken PEM block stops the run before any request (exit 2), naming the file', async () => {
    const pem = await readFile(certs.ca, 'utf8');
    const lines = pem.split('\n');
    // One base64 line of the middle lost, as a careless copy loses it: still a BEGIN ... END block.
    const broken = join(await scratchDir(), 'broken-ca.pem');
    await writeFile(broken, [...lines.slice(0, 5), ...lines.slice(6)].join('\n'));
    const before = sandbox.stats().requests.total;
    const run = await runInProcess(COMPANIES, {
      url: `https://127.0.0.1:${port.good}`,
      apiKey: KEY,
      env: { PROSPECT_CA_FILE: broken },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `the CA file ${broken}, set by PROSPECT_CA_FILE, has a broken certificate (block 1 of 1)`,
    );
    expect(sandbox.stats().requests.total).toBe(before);
  });

  // Spawned: Node prints DEP0123 on the process's own stderr, which a run in process does not capture.
  it('an https proxy that is not trusted is blamed, not the service; no DEP0123 warning for its IP address', async () => {
    const run = await runCli(COMPANIES, {
      url: 'https://api.prospect.test',
      apiKey: KEY,
      env: { HTTPS_PROXY: `https://127.0.0.1:${port.good}` },
    });
    expect(run.code).toBe(5);
    expect(run.stderr).toMatch(
      new RegExp(`^prospect: cannot trust the proxy 127\\.0\\.0\\.1:${port.good}: its certificate is not trusted`),
    );
    expect(run.stderr).not.toMatch(/api\.prospect\.test/);
    expect(run.stderr).not.toMatch(/DEP0123|DeprecationWarning/);
  });
});
