/**
 * `prospect sandbox` as a user runs it: the built binary (npm test builds first). The URL is the first
 * stdout line once listening, the keys go to stderr, SIGTERM and SIGINT stop it with exit 0, and a bad
 * flag is one line on stderr with exit 2.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/cli.js';
import { call, SANDBOX_KEYS, spawnSandbox } from '../helpers/sandbox.js';

describe('prospect sandbox (built CLI)', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('prints the URL first, serves, and exits 0 on %s', async (signal) => {
    const run = spawnSandbox(['--port', '0', '--companies', '2000', '--as-of', '2025-06-30']);
    const url = await run.url;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await call(url, '/api/v1/companies?technology=Shopify&limit=1', { key: SANDBOX_KEYS.growth });
    expect(res.status).toBe(200);
    const ended = await run.stop(signal);
    expect({ code: ended.code, signal: ended.signal }).toEqual({ code: 0, signal: null });
    // Read after exit: stderr may still be in flight while the first answer arrives.
    for (const key of Object.values(SANDBOX_KEYS)) expect(ended.stderr).toContain(key);
  });

  it.each([
    [['--port', 'abc']],
    [['--port', '70000']],
    [['--companies', '0']],
    [['--companies', '1000001']],
    [['--seed', '-1']],
    [['--as-of', '2025-02-30']],
    [['--fail-rate', '1.5']],
    [['--latency', 'slow']],
    [['--rate-limit', '0']],
    [['--host', '0.0.0.0']],
    [['--variant', 'paging-sideways']],
    [['--contract', '/nonexistent/contract.json']],
  ])('exits 2 with what happened, then what to do, for %j', async (args) => {
    // The first row spawned; the others run the same main() in process (a wrongly accepted flag
    // would start listening there and never finish: the run's timeout fails the test).
    const { code, stdout, stderr } =
      args[1] === 'abc'
        ? await spawnSandbox(['--port', '0', ...args]).finished
        : await runInProcess(['sandbox', '--port', '0', ...args], { timeoutMs: 15_000 });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^prospect: (?!prospect)\S/);
  });

  it('--fail-rate, --faults, --fault-seed, --faults-after and --latency-spike reach the server; /_sandbox/stats counts the faults', async () => {
    const run = spawnSandbox([
      '--port',
      '0',
      '--companies',
      '2000',
      '--fail-rate',
      '1',
      '--faults',
      '502,429',
      '--fault-seed',
      '4',
      '--faults-after',
      '1',
      '--latency-spike',
      '50',
      '--latency-spike-rate',
      '1',
    ]);
    const url = await run.url;
    const statuses: number[] = [];
    for (let k = 0; k < 3; k++) {
      // Not `call`: the injected 502 is an HTML page, not JSON.
      const res = await request(`${url}/api/v1/companies?technology=Shopify&limit=1`, {
        headers: { authorization: `Bearer ${SANDBOX_KEYS.growth}` },
      });
      await res.body.text();
      statuses.push(res.statusCode);
    }
    expect(statuses[0]).toBe(200);
    expect(statuses.slice(1).sort()).toEqual([429, 502]);
    const { body } = await call(url, '/_sandbox/stats');
    expect(body.faults).toMatchObject({ '502': 1, '429': 1, '500': 0, 'latency-spike': 2 });
    const ended = await run.stop('SIGTERM');
    expect(ended.code).toBe(0);
    expect(ended.stderr).toMatch(/fail rate 1 \(502, 429\), fault seed 4, faults after 1 requests/);
  });

  it('--help names every fault kind', async () => {
    const { FAULT_KIND_NAMES } = await import('../../src/sandbox/index.js');
    const help = await runInProcess(['sandbox', '--help']);
    expect(help.code).toBe(0);
    const text = help.stdout;
    for (const kind of FAULT_KIND_NAMES) expect(text).toContain(kind);
    for (const flag of ['--faults', '--fault-seed', '--faults-after', '--latency-spike', '--latency-spike-rate'])
      expect(text).toContain(flag);
  });

  it('listens on a non-loopback address only with --public', async () => {
    const run = spawnSandbox(['--port', '0', '--host', '0.0.0.0', '--public', '--companies', '2000']);
    expect(await run.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    expect((await run.stop('SIGTERM')).code).toBe(0);
  });
});
