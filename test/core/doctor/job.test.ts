/**
 * runDoctor through its seam (src/core/doctor/job.ts): in process, the settings resolved from the run's
 * own environment as a command resolves them, its requests over a route stub that fails the test on
 * an unmatched request or an unused route, and stand-ins for the DNS, TCP and TLS steps it times. What
 * needs a process or a real network (a signal, a name answered late, a black hole, nginx and squid)
 * stays in test/commands/doctor.test.ts; the steps themselves are test/core/doctor/probes.test.ts's.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { doctorDeps, runDoctor, type DoctorDeps } from '../../../src/core/doctor/job.js';
import type { NetworkSteps } from '../../../src/core/doctor/probes.js';
import { DOCTOR_FLAGS } from '../../../src/options/command-flags.js';
import type { FlagValues } from '../../../src/options/flag.js';
import { resolveConnection } from '../../../src/runtime/connection.js';
import { flagsFrom, jobContext } from '../../helpers/job-context.js';
import { routeStub, STUB_BASE_URL, type RouteStub } from '../../helpers/route-stub.js';
import { scratchDir } from '../../helpers/scratch.js';

const KEY = 'doctor-seam-key-0000';

/** Steps that answer at once: DNS gives the host back as its address, TCP reaches it. */
const STEPS_THAT_ANSWER: NetworkSteps = {
  lookUp: async (host) => ({ value: [host], ms: 1 }),
  connectToAny: async (addresses) => ({ value: { address: addresses.at(-1)!, failed: [] }, ms: 2 }),
  shakeHands: async () => {
    throw new Error('no TLS step over plain http');
  },
};

/** Steps a run must not reach (a refused setting stops before any connection). */
const NO_STEP: NetworkSteps = {
  lookUp: () => Promise.reject(new Error('DNS looked up')),
  connectToAny: () => Promise.reject(new Error('TCP connected')),
  shakeHands: () => Promise.reject(new Error('TLS shaken')),
};

/**
 * `prospect doctor` in process with this environment (a config directory of its own, so no user's
 * file is read): the connection resolved from it as doctor resolves it, every request to `stub`.
 */
async function doctor(stub: RouteStub, env: NodeJS.ProcessEnv, network: NetworkSteps) {
  const dir = await scratchDir('prospect-doctor-job-');
  const job = jobContext(
    {},
    { PROSPECT_CONFIG_DIR: join(dir, 'config'), PROSPECT_CACHE_DIR: join(dir, 'cache'), ...env },
  );
  const deps: DoctorDeps = {
    ...doctorDeps(job.ctx),
    ...job.depsOver(stub),
    connection: () => resolveConnection(job.ctx),
    network,
  };
  const flags = flagsFrom(DOCTOR_FLAGS, []) as FlagValues<typeof DOCTOR_FLAGS>;
  const code = await job.exitCodeOf(runDoctor(job.ctx, flags, deps));
  return { code, lines: job.stdout().trimEnd().split('\n'), stderr: job.stderr() };
}

describe('runDoctor: the settings', () => {
  it('no key and no base URL: a FAIL line for each, not only the first, and exit 2', async () => {
    const run = await doctor(routeStub(), {}, NO_STEP);
    expect(run.code).toBe(2);
    expect(run.lines).toEqual([
      'FAIL key       no API key is set. Set PROSPECT_API_KEY (or run `prospect config set api-key`), ' +
        'or add --sandbox to try prospect on generated data.',
      'FAIL base URL  no service address is set. Set PROSPECT_BASE_URL ' +
        '(or `prospect config set base-url URL`, or --base-url), or add --sandbox.',
    ]);
  });

  it('one missing setting: its FAIL line alone, and the error a command gives (exit 2)', async () => {
    const run = await doctor(routeStub(), { PROSPECT_BASE_URL: STUB_BASE_URL }, NO_STEP);
    expect(run.code).toBe(2);
    expect(run.lines).toHaveLength(1);
    expect(run.lines[0]).toMatch(/^FAIL key {7}no API key is set\. /);
  });

  it.for([
    ['ftp://127.0.0.1', /^the base URL must start with https:\/\/ \(got ftp:\/\/\)/],
    ['http://example.com', /^refusing to send the API key over plain http to example\.com; use https:\/\//],
  ] as const)('base URL %s: exit 2 before any step or request', async ([url, refusal]) => {
    const stub = routeStub();
    const dir = await scratchDir('prospect-doctor-job-');
    const job = jobContext({}, { PROSPECT_CONFIG_DIR: dir, PROSPECT_API_KEY: KEY, PROSPECT_BASE_URL: url });
    const deps = { ...doctorDeps(job.ctx), ...job.depsOver(stub), connection: () => resolveConnection(job.ctx) };
    const failure = await runDoctor(job.ctx, flagsFrom(DOCTOR_FLAGS, []) as FlagValues<typeof DOCTOR_FLAGS>, {
      ...deps,
      network: NO_STEP,
    }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toMatch(refusal);
    expect(await job.exitCodeOf(Promise.reject(failure))).toBe(2);
    expect(job.stdout()).toBe('');
    expect(stub.requests).toEqual([]);
  });
});

describe('runDoctor: the way there and the key', () => {
  const env = { PROSPECT_API_KEY: KEY, PROSPECT_BASE_URL: STUB_BASE_URL };

  it('where each setting came from and each step, then a 401: exit 4, as a command would', async () => {
    const stub = routeStub();
    const unauthorized = { error: { code: 'unauthorized', message: 'unknown key' } };
    stub.route(
      'GET',
      '/api/v1/companies',
      { technology: 'WordPress', limit: '1' },
      { status: 401, body: unauthorized },
    );
    const network = {
      ...STEPS_THAT_ANSWER,
      connectToAny: async () => ({
        value: { address: '127.0.0.1', failed: ['::1: connect ECONNREFUSED ::1:9'] },
        ms: 3,
      }),
    };
    const run = await doctor(stub, env, network);
    expect(run.code).toBe(4);
    expect(run.lines.slice(0, 7)).toEqual([
      `base URL  ${STUB_BASE_URL} (from PROSPECT_BASE_URL)`,
      'proxy     none: 127.0.0.1 is this machine',
      'CA        none needed (plain http on this machine)',
      'key       …0000',
      'ok  DNS       127.0.0.1 → 127.0.0.1 (1 ms)',
      '--  TCP       127.0.0.1:9 at ::1: connect ECONNREFUSED ::1:9',
      'ok  TCP       127.0.0.1:9 at 127.0.0.1 (3 ms)',
    ]);
    expect(run.lines.at(-1)).toMatch(/^FAIL HTTP {6}the service rejected the API key \(401 unauthorized\)\./);
  });

  it('a step that fails: its FAIL line, exit 5, and no request', async () => {
    const refused = Object.assign(new Error('no address answered: 127.0.0.1: refused'), {
      code: 'ECONNREFUSED',
    });
    const run = await doctor(routeStub(), env, { ...STEPS_THAT_ANSWER, connectToAny: () => Promise.reject(refused) });
    expect(run.code).toBe(5);
    expect(run.lines.at(-1)).toBe(
      'FAIL TCP       TCP to 127.0.0.1:9 failed: no address answered: 127.0.0.1: refused (ECONNREFUSED).',
    );
  });
});
