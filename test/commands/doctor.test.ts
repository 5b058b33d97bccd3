/**
 * `prospect doctor` as a user runs it: against the sandbox (in process, and over https behind nginx
 * through squid) it exits 0 and every line is true of the set-up the test made; against a black hole
 * it exits 5, naming the host and port, after its own short timeouts (3 s a step, 4 s the request:
 * said in the message, so no stopwatch is needed).
 *
 * Spawned: SIGTERM, the runs that need names answered by a preload (`node --import`, which a worker
 * thread does not take), and one refusal, to show the binary's exit code and stderr. The others are
 * the lines main() prints and its exit code: the same main() in process (runInProcess, the same
 * environment and key-leak checks). The job's logic with no network to prove (missing settings,
 * refused base URLs, a 401, a failed step) runs through its seam: test/core/doctor/job.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishCli, runCli, runInProcess, startCli } from '../helpers/cli.js';
import { errorBody, startScriptedServer } from '../helpers/scripted-server.js';
import {
  NGINX,
  OPENSSL,
  PROXIED_HOST,
  SQUID,
  startBlackHole,
  startHttpsBehindProxy,
  type HttpsBehindProxy,
} from '../helpers/real-servers.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../helpers/sandbox.js';

const LOCAL_NAMES = {
  NODE_OPTIONS: `--import=${new URL('../helpers/hosts-preload.mjs', import.meta.url).href}`,
  PROSPECT_TEST_HOSTS: `${PROXIED_HOST}=127.0.0.1`,
};

let sandbox: RunningSandbox;
beforeAll(async () => {
  // Doctor asks for a page or two: a small dataset is the same service to it.
  sandbox = await startTestSandbox({ companies: 2000 });
});
afterAll(async () => {
  await sandbox?.close();
});

describe('prospect doctor', () => {
  // The wait is the longest a Retry-After is waited (30 s), above this test's timeout: a run that waited
  // it out (as doctor did) fails by the timeout; one that stops at once takes about a process start.
  it('SIGTERM while it waits out a 429: it stops at once, and asks nothing more', { timeout: 20_000 }, async () => {
    const server = await startScriptedServer([
      { status: 429, headers: { 'retry-after': '30' }, body: errorBody('rate_limited', 'slow down') },
    ]);
    try {
      const child = startCli(['doctor'], { url: server.url, apiKey: 'doctor-429-key-0000' });
      while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      child.kill('SIGTERM');
      const run = await finishCli(child, { apiKey: 'doctor-429-key-0000' });
      expect(run.code).toBe(143);
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('against the sandbox: exit 0, where each setting came from, each step, the plan and the contract', async () => {
    const run = await runInProcess(['doctor'], { url: sandbox.url, apiKey: SANDBOX_KEYS.growth });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    const port = new URL(sandbox.url).port;
    expect(lines.slice(0, 4)).toEqual([
      `base URL  ${sandbox.url} (from PROSPECT_BASE_URL)`,
      'proxy     none: 127.0.0.1 is this machine',
      'CA        none needed (plain http on this machine)',
      'key       …owth',
    ]);
    expect(lines[4]).toMatch(/^ok {2}DNS {7}127\.0\.0\.1 → 127\.0\.0\.1 \(\d+ ms\)$/);
    expect(lines[5]).toMatch(new RegExp(`^ok  TCP       127\\.0\\.0\\.1:${port} at 127\\.0\\.0\\.1 \\(\\d+ ms\\)$`));
    expect(lines[6]).toMatch(
      new RegExp(`^ok  HTTP      127\\.0\\.0\\.1:${port} answered GET /companies \\(\\d+ ms\\)$`),
    );
    expect(lines.slice(7, 9)).toEqual([
      'ok  plan      companies: open to this key',
      'ok  plan      contacts: open to this key (Growth plan or higher)',
    ]);
    expect(lines).toContain('ok  contract  next page: matches (next_cursor)');
    expect(lines).toContain('ok contract: every point checked matches docs/api-contract.md');
    expect(lines.at(-2)).toMatch(/^tolerances: --timeout 30 s a request \(connect 10 s\), --max-retries 5 /);
    expect(lines.at(-1)).toBe('The service is usable from here.');
    // No paid unit: verify is never called.
    expect(sandbox.stats().units).toEqual({ free: 0, starter: 0, growth: 0, scale: 0 });
  });

  it('a Free key: contacts are not on its plan, and the service is still usable (exit 0)', async () => {
    const run = await runInProcess(['--timeout', '12', 'doctor'], { url: sandbox.url, apiKey: SANDBOX_KEYS.free });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("ok  plan      contacts: not on this key's plan (403 plan_required: Free or Starter)");
    expect(run.stdout).toContain(
      "??  contract  contact fields: could not tell (contacts are not on this key's plan (403))",
    );
    expect(run.stdout).toMatch(/tolerances: --timeout 12 s a request \(connect 10 s\)/);
  });

  it('a base URL the commands refuse: exit 2 before any connection, with the line a command gives', async () => {
    // Spawned: this file's one refusal through a real process.
    const spawned = await runCli(['doctor'], { url: 'not a url', apiKey: SANDBOX_KEYS.growth });
    expect(spawned.code).toBe(2);
    expect(spawned.stdout).toBe('');
    expect(spawned.stderr).toBe(
      'prospect: the base URL "not a url" is not a valid URL\nGive the service root, e.g. https://api.example.com\n',
    );
    // The other refusals, and the missing settings: test/core/doctor/job.test.ts, through the job's seam.
  });

  /*
   * Names answered by test/helpers/hosts-preload.mjs, loaded into the spawned CLI with `node --import`:
   * it replaces dns.lookup and dns.promises.lookup for the listed names only, so the CLI's own lookup
   * path (doctor's DNS step, net and undici under the HTTP request) runs on answers the test chooses (a
   * late one, two addresses in order), and /etc/hosts and /etc/resolv.conf stay as they are. A real
   * DNS server (dnsmasq) was not used: getaddrinfo reads only /etc/resolv.conf, which a test cannot
   * point at it.
   */
  // The answer comes after 120 s, far past this test's timeout: a process the pending answer held (it
  // did, until it came) fails by the timeout; one that ends takes its 3 s and a process start.
  it(
    'a name whose DNS answer takes 120 s: DNS is blamed after its own 3 s, and the process ends',
    { timeout: 30_000 },
    async () => {
      const child = startCli(['doctor'], {
        url: `https://${PROXIED_HOST}:9`,
        apiKey: 'slow-dns-key-0000',
        env: { ...LOCAL_NAMES, PROSPECT_TEST_DNS_DELAY: `${PROXIED_HOST}=120000` },
      });
      const run = await finishCli(child, { apiKey: 'slow-dns-key-0000' });
      expect(run.code).toBe(5);
      expect(run.stderr.split('\n')[0]).toBe(
        `prospect: DNS of ${PROXIED_HOST} failed: no DNS answer within 3 s (ETIMEDOUT).`,
      );
      expect(run.stderr).not.toMatch(/TLS/);
      expect(run.stdout).not.toMatch(/^ok {2}DNS|TCP|TLS/m);
      expect(run.stdout.trimEnd().split('\n').at(-1)).toBe(
        `FAIL DNS       DNS of ${PROXIED_HOST} failed: no DNS answer within 3 s (ETIMEDOUT).`,
      );
    },
  );

  it('a dual-stack name whose first address (::1) refuses: the second is used, and said', async () => {
    const port = new URL(sandbox.url).port;
    const run = await runCli(['doctor'], {
      url: `http://localhost:${port}`,
      apiKey: SANDBOX_KEYS.growth,
      env: { ...LOCAL_NAMES, PROSPECT_TEST_HOSTS: 'localhost=::1+127.0.0.1' },
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toContainEqual(expect.stringMatching(/^ok {2}DNS {7}localhost → ::1, 127\.0\.0\.1 \(\d+ ms\)$/));
    expect(lines).toContain(`--  TCP       localhost:${port} at ::1: connect ECONNREFUSED ::1:${port}`);
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^ok  TCP       localhost:${port} at 127\\.0\\.0\\.1 \\(\\d+ ms\\)$`)),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^ok  HTTP      localhost:${port} answered GET /companies`)),
    );
    expect(lines.at(-1)).toBe('The service is usable from here.');
  });

  // In process: the timeouts are main()'s (the two runs go one after the other).
  describe('against a black hole (accepts TCP, never answers)', () => {
    let blackHole: Awaited<ReturnType<typeof startBlackHole>>;
    let port: number;
    beforeAll(async () => {
      blackHole = await startBlackHole();
      port = blackHole.port;
    });
    afterAll(async () => {
      await blackHole?.close();
    });

    it.concurrent('over http: exit 5 after its 4 s request timeout, naming host and port', async ({ expect }) => {
      const run = await runInProcess(['doctor'], { url: `http://127.0.0.1:${port}`, apiKey: 'black-hole-key-0000' });
      expect(run.code).toBe(5);
      expect(run.stderr).toMatch(
        new RegExp(
          `^prospect: no answer from 127\\.0\\.0\\.1:${port} for /companies after 1 attempt ` +
            `\\(last: timeout: no complete answer within 4 s\\)\\n`,
        ),
      );
      expect(run.stdout).toMatch(/^FAIL HTTP {6}no answer from .+ after 1 attempt/m);
    });

    it.concurrent('over https: exit 5 after its 3 s handshake timeout, naming host and port', async ({ expect }) => {
      const run = await runInProcess(['doctor'], {
        url: `https://127.0.0.1:${port}`,
        apiKey: 'black-hole-key-0000',
      });
      expect(run.code).toBe(5);
      expect(run.stderr).toMatch(
        new RegExp(
          `^prospect: TLS with 127\\.0\\.0\\.1:${port} failed: no TLS handshake within 3 s \\(ETIMEDOUT\\)\\.\\n`,
        ),
      );
      expect(run.stdout.trimEnd().split('\n').at(-1)).toBe(
        `FAIL TLS       TLS with 127.0.0.1:${port} failed: no TLS handshake within 3 s (ETIMEDOUT).`,
      );
    });
  });

  describe.skipIf(NGINX.skip || OPENSSL.skip || SQUID.skip)('over https behind nginx, through squid', () => {
    let servers: HttpsBehindProxy;
    let squid: HttpsBehindProxy['squid'];
    let caFile: string;
    let tlsPort: number;
    beforeAll(async () => {
      servers = await startHttpsBehindProxy(sandbox.url);
      ({ squid, caFile, tlsPort } = servers);
    });
    afterAll(async () => {
      await servers?.stop();
    });

    it('exit 0, and every line says what is in effect: the proxy, the CA, the steps', async () => {
      const url = `https://${PROXIED_HOST}:${tlsPort}`;
      const run = await runCli(['doctor'], {
        url,
        apiKey: SANDBOX_KEYS.growth,
        env: { HTTPS_PROXY: squid.url, PROSPECT_CA_FILE: caFile, ...LOCAL_NAMES },
      });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const lines = run.stdout.trimEnd().split('\n');
      expect(lines.slice(0, 3)).toEqual([
        `base URL  ${url} (from PROSPECT_BASE_URL)`,
        `proxy     ${squid.url} (from HTTPS_PROXY)`,
        `CA        Node's CAs + ${caFile} (PROSPECT_CA_FILE)`,
      ]);
      expect(lines).toContain('ok  TLS       through the proxy: checked by the HTTP request below');
      expect(
        lines.some((line) =>
          new RegExp(`^ok  TCP       the proxy 127\\.0\\.0\\.1:${squid.port} at 127\\.0\\.0\\.1 \\(\\d+ ms\\)$`).test(
            line,
          ),
        ),
      ).toBe(true);
      expect(lines.at(-1)).toBe('The service is usable from here.');
    });

    it('direct over https: the certificate the service showed, and how it was trusted', async () => {
      // In process: no name to answer here (the run through squid above is spawned for its preload).
      const run = await runInProcess(['doctor'], {
        url: `https://127.0.0.1:${tlsPort}`,
        apiKey: SANDBOX_KEYS.growth,
        env: { PROSPECT_CA_FILE: caFile },
      });
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(
        new RegExp(
          String.raw`^ok {2}TLS {7}TLSv1\.3, certificate for IP Address:127\.0\.0\.1, DNS:localhost, ` +
            String.raw`DNS:api\.prospect\.test, issued by prospect test CA, valid until .+ \(\d+ ms\)$`,
          'm',
        ),
      );
      // The same service without the CA (test/api/tls.cli.test.ts spawns the refusals).
      const untrusted = await runInProcess(['doctor'], {
        url: `https://127.0.0.1:${tlsPort}`,
        apiKey: SANDBOX_KEYS.growth,
      });
      expect(untrusted.code).toBe(5);
      expect(untrusted.stderr).toMatch(
        new RegExp(
          String.raw`^prospect: cannot trust the service at 127\.0\.0\.1:\d+: its certificate is not trusted ` +
            String.raw`\(TLS: UNABLE_TO_VERIFY_LEAF_SIGNATURE\)\nSet ca-file `,
        ),
      );
    });
  });
});
