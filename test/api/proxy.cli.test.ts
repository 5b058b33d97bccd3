/**
 * Proxies as curl and gh read them (issue 27), against real programs: the sandbox behind nginx
 * (https, a certificate of the test's own CA, named for PROXIED_HOST) and squid as the forward proxy.
 * With HTTPS_PROXY, companies, contacts, verify and pipeline all work and squid's access log shows
 * each run's tunnel to the service; with NO_PROXY covering the host the log shows nothing new.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir, type CliOptions } from '../helpers/cli.js';
import {
  freePort,
  NGINX,
  OPENSSL,
  PROXIED_HOST,
  PROXY_PASSWORD,
  PROXY_USER,
  SQUID,
  startHttpsBehindProxy,
  type HttpsBehindProxy,
} from '../helpers/real-servers.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
/**
 * Every run here has PROXIED_HOST answered as /etc/hosts would (hosts-preload.mjs): a run that goes
 * direct (NO_PROXY, or a proxy ignored by a bug) reaches nginx without a DNS query leaving this
 * machine, and the squid log tells which way it went.
 */
const LOCAL_NAMES = {
  NODE_OPTIONS: `--import=${new URL('../helpers/hosts-preload.mjs', import.meta.url).href}`,
  PROSPECT_TEST_HOSTS: `${PROXIED_HOST}=127.0.0.1`,
};

describe.skipIf(NGINX.skip || OPENSSL.skip || SQUID.skip)('through squid to an https sandbox behind nginx', () => {
  let sandbox: RunningSandbox;
  let servers: HttpsBehindProxy;
  let squid: HttpsBehindProxy['squid'];
  let caFile: string;
  let tlsPort: number;
  let domains: string;

  beforeAll(async () => {
    // 2,000 companies: enough Shopify shops in the US for every command here, at a fraction of the default's cost.
    sandbox = await startTestSandbox({ companies: 2_000 });
    servers = await startHttpsBehindProxy(sandbox.url);
    ({ squid, caFile, tlsPort } = servers);
    // Set-up, in process: the domains the contacts runs read.
    const listed = await runInProcess(
      ['companies', '-t', 'Shopify', '--country', 'us', '--max', '5', '--columns', 'domain', '--format', 'csv'],
      { url: sandbox.url, apiKey: KEY },
    );
    expect(listed.code).toBe(0);
    domains = listed.stdout;
  });
  afterAll(async () => {
    await servers?.stop();
    await sandbox?.close();
  });

  const service = () => `https://${PROXIED_HOST}:${tlsPort}`;
  const tunnels = async () =>
    (await squid.log()).split('\n').filter((line) => line.includes(`CONNECT ${PROXIED_HOST}:${tlsPort}`)).length;
  /** squid writes a tunnel's line when it closes, as the run's process exits: wait for it, by count. */
  async function tunnelsReach(count: number): Promise<number> {
    for (let tries = 0; tries < 100 && (await tunnels()) < count; tries++) await sleep(100);
    return tunnels();
  }

  const COMMANDS: Array<{ name: string; args: string[]; input?: () => string }> = [
    { name: 'companies', args: ['companies', '-t', 'Shopify', '--max', '5', '--format', 'csv'] },
    { name: 'contacts', args: ['contacts', '--format', 'csv'], input: () => domains },
    { name: 'verify', args: ['verify', '--yes', '--format', 'csv', 'ceo@example.com'] },
    { name: 'pipeline', args: ['pipeline', '-t', 'Shopify', '--country', 'us', '--max', '3', '--format', 'csv'] },
  ];

  /**
   * The direct run (the reference) and the proxied runs of contacts, verify and pipeline run in
   * process; companies through the proxy is spawned, to show the binary takes the same way. A run in
   * process does not get LOCAL_NAMES (a --import hook of a process): it needs none, since squid
   * resolves the service's name, and one that went direct by a bug would fail to resolve it.
   */
  it.for(COMMANDS)(
    '$name: HTTPS_PROXY takes it through squid, whose log shows it; the output is that of a direct run',
    async ({ name, args, input }) => {
      const direct = await runInProcess(args, { url: sandbox.url, apiKey: KEY, input: input?.() });
      expect(direct.code, direct.stderr).toBe(0);
      expect(direct.stdout.split('\n').length).toBeGreaterThan(2);
      const before = await tunnels();
      const proxied = await (name === 'companies' ? runCli : runInProcess)(args, {
        url: service(),
        apiKey: KEY,
        input: input?.(),
        env: { HTTPS_PROXY: squid.url, PROSPECT_CA_FILE: caFile, ...(name === 'companies' ? LOCAL_NAMES : {}) },
      });
      expect(proxied.stderr).toBe(direct.stderr);
      expect(proxied.code).toBe(0);
      expect(proxied.stdout).toBe(direct.stdout);
      expect(await tunnelsReach(before + 1)).toBeGreaterThan(before);
    },
  );

  // The runs through the proxy in process; the runs that go direct (NO_PROXY) are spawned, since they
  // reach the service's name through LOCAL_NAMES, a hook only a process loads.
  it('https_proxy, ALL_PROXY and the proxy setting are read too; NO_PROXY covering the host sends nothing through it', async () => {
    const args = ['companies', '-t', 'Shopify', '--max', '2', '--format', 'csv'];
    const env = (extra: CliOptions['env']) => ({ PROSPECT_CA_FILE: caFile, ...extra });
    let seen = await tunnels();
    for (const variable of ['https_proxy', 'ALL_PROXY']) {
      const run = await runInProcess(args, { url: service(), apiKey: KEY, env: env({ [variable]: squid.url }) });
      expect(run.code, variable).toBe(0);
      seen = await tunnelsReach(seen + 1);
    }
    const config = join(await scratchDir(), 'config');
    expect(
      (await runInProcess(['config', 'set', 'proxy', squid.url], { env: { PROSPECT_CONFIG_DIR: config } })).code,
    ).toBe(0);
    const bySetting = await runInProcess(args, {
      url: service(),
      apiKey: KEY,
      env: env({ PROSPECT_CONFIG_DIR: config }),
    });
    expect(bySetting.code).toBe(0);
    seen = await tunnelsReach(seen + 1);

    for (const noProxy of [PROXIED_HOST, '.prospect.test', `prospect.test:${tlsPort}`]) {
      const direct = await runCli(args, {
        url: service(),
        apiKey: KEY,
        env: env({ HTTPS_PROXY: squid.url, NO_PROXY: noProxy, ...LOCAL_NAMES }),
      });
      expect(direct.code, noProxy).toBe(0);
    }
    // The loopback address is never proxied, whatever HTTPS_PROXY says (as gh does).
    expect(
      (
        await runInProcess(args, {
          url: `https://127.0.0.1:${tlsPort}`,
          apiKey: KEY,
          env: env({ HTTPS_PROXY: squid.url }),
        })
      ).code,
    ).toBe(0);
    await sleep(500);
    expect(await tunnels()).toBe(seen);
    expect((await squid.log()).split('\n').filter((line) => line.includes(`127.0.0.1:${tlsPort}`))).toEqual([]);
  });

  // In process: what config writes and shows.
  it('config list and get show a proxy setting without its password', async () => {
    const config = join(await scratchDir(), 'config');
    const env = { PROSPECT_CONFIG_DIR: config };
    expect(
      (
        await runInProcess(
          ['config', 'set', 'proxy', `http://${PROXY_USER}:${PROXY_PASSWORD}@127.0.0.1:${squid.authPort}`],
          {
            env,
          },
        )
      ).code,
    ).toBe(0);
    const list = await runInProcess(['config', 'list'], { env });
    expect(list.stdout).toMatch(
      new RegExp(`^proxy +http://${PROXY_USER}:\\*\\*\\*@127\\.0\\.0\\.1:${squid.authPort} +config file$`, 'm'),
    );
    const get = await runInProcess(['config', 'get', 'proxy'], { env });
    expect(`${list.stdout}${list.stderr}${get.stdout}${get.stderr}`).not.toContain(PROXY_PASSWORD);
  });

  describe('a proxy that fails says so, in one line and what to do, and never prints its password', () => {
    const args = ['companies', '-t', 'Shopify', '--max', '2', '--format', 'csv'];
    // In process: the proxy's answers are network behaviour; the file's spawned runs are above.
    const run = (proxy: string, url = service()) =>
      runInProcess(args, { url, apiKey: KEY, env: { HTTPS_PROXY: proxy, PROSPECT_CA_FILE: caFile } });

    it('asks for credentials (407): exit 5 at once, no retry; with them in its URL the run goes through', async () => {
      const before = (await squid.log()).split('\n').length;
      const without = await run(`http://127.0.0.1:${squid.authPort}`);
      expect(without.code).toBe(5);
      expect(without.stderr).toMatch(
        new RegExp(
          `^prospect: the proxy http://127\\.0\\.0\\.1:${squid.authPort} asks for credentials \\(407 Proxy Authentication Required\\)\nPut them in the proxy URL`,
        ),
      );
      const wrong = await run(`http://${PROXY_USER}:not-${PROXY_PASSWORD}@127.0.0.1:${squid.authPort}`);
      expect(wrong.code).toBe(5);
      expect(wrong.stderr).toContain('refused the user name and password in its URL');
      expect(wrong.stderr).not.toContain(PROXY_PASSWORD);
      expect(wrong.stderr).not.toContain(PROXY_USER);
      const right = await run(`http://${PROXY_USER}:${PROXY_PASSWORD}@127.0.0.1:${squid.authPort}`);
      expect(right.code).toBe(0);
      // One 407 for each refused run: asked once, never again.
      const lines = (await squid.log()).split('\n').slice(before - 1);
      expect(lines.filter((line) => line.includes('/407 '))).toHaveLength(2);
    });

    it('refuses the destination (403): exit 5, naming the proxy and the host', async () => {
      const refused = await run(squid.url, `https://${PROXIED_HOST}:${squid.forbiddenPort}`);
      expect(refused.code).toBe(5);
      expect(refused.stderr).toMatch(
        new RegExp(
          `^prospect: the proxy http://127\\.0\\.0\\.1:${squid.port} refused to connect to ${PROXIED_HOST.replaceAll('.', '\\.')}:${squid.forbiddenPort} \\(403\\)\n`,
        ),
      );
      expect(
        (await squid.log())
          .split('\n')
          .filter((line) => line.includes(`/403 `) && line.includes(`:${squid.forbiddenPort}`)),
      ).toHaveLength(1);
    });

    it('is not there (connection refused): exit 5, naming the proxy and the class', async () => {
      const nowhere = await freePort();
      const proxy = `http://${PROXY_USER}:${PROXY_PASSWORD}@127.0.0.1:${nowhere}`;
      const down = await runInProcess(['--max-retries', '1', ...args], {
        url: service(),
        apiKey: KEY,
        env: { HTTPS_PROXY: proxy, PROSPECT_CA_FILE: caFile },
      });
      expect(down.code).toBe(5);
      expect(down.stderr).toMatch(
        new RegExp(
          `^prospect: no answer from the proxy 127\\.0\\.0\\.1:${nowhere} for /companies after \\d+ attempts \\(last: proxy: connection refused \\(ECONNREFUSED\\)\\)\nCheck the proxy`,
        ),
      );
      expect(down.stderr).not.toContain(PROXY_PASSWORD);
    });
  });
});
