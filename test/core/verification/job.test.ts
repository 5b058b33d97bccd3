/**
 * runVerify through its seam (src/runtime/job-deps.ts): in process, its paid client over a route stub
 * that fails the test on an unmatched request or an unused route, so the stub's routes are the units
 * paid. The ledger is in a cache directory of the test's own. What only a process shows (exit codes
 * on stderr, a spawned run's bytes) stays in test/commands/verify.test.ts.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runVerify, type VerifyFlags } from '../../../src/core/verification/job.js';
import { VERIFY_FLAGS } from '../../../src/options/command-flags.js';
import { csvRecords } from '../../helpers/csv.js';
import { flagsFrom, jobContext } from '../../helpers/job-context.js';
import { routeStub, type RouteStub } from '../../helpers/route-stub.js';
import { scratchDir } from '../../helpers/scratch.js';

const VERIFY = '/api/v1/verify';
const CHECKED_AT = '2026-11-30T10:00:00Z';

/** One paid answer for `email`, answered once: a second call for it fails the test. */
function pays(stub: RouteStub, email: string, status = 'valid'): void {
  stub.route(
    'GET',
    VERIFY,
    { email },
    { body: { data: { email, status, checked_at: CHECKED_AT }, meta: { units_used: 1 } } },
  );
}

/** `prospect verify WORDS ADDRESSES` in process, with a cache (the ledger) of its own unless one is given. */
async function verify(stub: RouteStub, words: string[], addresses: string[] = [], cache?: string) {
  const dir = await scratchDir('prospect-verify-job-');
  const job = jobContext(
    {},
    { PROSPECT_CACHE_DIR: cache ?? join(dir, 'cache'), PROSPECT_CONFIG_DIR: join(dir, 'config') },
  );
  const flags = { ...flagsFrom(VERIFY_FLAGS, words), args: addresses } as VerifyFlags;
  const code = await job.exitCodeOf(runVerify(job.ctx, flags, job.depsOver(stub)));
  return { code, stdout: job.stdout(), stderr: job.stderr() };
}

const addresses = (count: number, offset = 0) =>
  Array.from({ length: count }, (_, index) => `person${index + offset}@example-${index + offset}.com`);

describe('runVerify over a route stub', () => {
  it('pays once per distinct valid address, never for a malformed one; a second run pays nothing', async () => {
    const stub = routeStub();
    for (const email of addresses(3)) pays(stub, email);
    const cache = join(await scratchDir('prospect-verify-ledger-'), 'cache');
    const input = [...addresses(3), 'PERSON0@example-0.com', 'not-an-address'];
    const first = await verify(stub, ['--yes', '--format', 'csv'], input, cache);
    expect(first.code, first.stderr).toBe(0);
    const rows = csvRecords(first.stdout);
    expect(rows.map((row) => row.verification)).toEqual(['valid', 'valid', 'valid', 'valid', 'malformed']);
    expect(rows[0]!.verified_at).toBe(CHECKED_AT);
    expect(first.stderr).toMatch(/skipped 1 invalid email address \(never sent\)/);
    // The same cache: every answer is in the ledger, so no route is left for a call to match.
    const again = await verify(stub, ['--yes', '--format', 'csv'], input, cache);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(first.stdout);
    expect(stub.requests).toHaveLength(3);
  });

  it('never pays past --budget and marks the rest unchecked', async () => {
    const stub = routeStub();
    const all = addresses(10, 100);
    // Undated addresses are paid in the order they came: the first three, and no other.
    for (const email of all.slice(0, 3)) pays(stub, email);
    const run = await verify(stub, ['--budget', '3', '--format', 'ndjson'], all);
    expect(run.code, run.stderr).toBe(0);
    const rows = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { verification: string });
    expect(rows.map((row) => row.verification)).toEqual([...Array(3).fill('valid'), ...Array(7).fill('unchecked')]);
  });

  it('--dry-run asks the service nothing and says what a run would spend', async () => {
    const stub = routeStub();
    const run = await verify(stub, ['--dry-run', '--budget', '4'], addresses(6, 200));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/would spend 4 units/);
    expect(stub.requests).toEqual([]);
  });

  it('keeps the input CSV columns and adds verification, verified_at and email_class', async () => {
    const stub = routeStub();
    pays(stub, 'ada@example-9.com');
    pays(stub, 'bob@example-9.com', 'invalid');
    const file = join(await scratchDir('prospect-verify-input-'), 'people.csv');
    writeFileSync(file, 'name,business_email\r\nAda,ada@example-9.com\r\nBob,bob@example-9.com\r\n');
    const run = await verify(stub, ['--yes', '--file', file, '--format', 'csv']);
    expect(run.code, run.stderr).toBe(0);
    const rows = csvRecords(run.stdout);
    expect(Object.keys(rows[0]!)).toEqual(['name', 'business_email', 'verification', 'verified_at', 'email_class']);
    expect(rows.map((row) => [row.name, row.verification])).toEqual([
      ['Ada', 'valid'],
      ['Bob', 'invalid'],
    ]);
  });
});
