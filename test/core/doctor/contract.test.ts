/**
 * `prospect doctor` proves the contract (issue 42, point 4): against the sandbox every point checked
 * matches and it says "ok contract"; against each variant it says `differs` at the point that differs,
 * naming the setting where one adapts the client. In process (runInProcess), a sandbox per variant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VARIANT_NAMES, type VariantName } from '../../../src/sandbox/variant-names.js';
import { runInProcess } from '../../helpers/cli.js';
import { scratchDir } from '../../helpers/scratch.js';
import { call, qs, SANDBOX_KEYS, startTestSandbox, todayUtc, type TestSandbox } from '../../helpers/sandbox.js';

/** Each variant, the point doctor must say differs, and the setting it must name (null: the client reads it). */
const TABLE: ReadonlyArray<{ variant: VariantName; point: string; setting: string | null }> = [
  { variant: 'paging-link-header', point: 'next page', setting: null },
  { variant: 'paging-meta-next-cursor', point: 'next page', setting: null },
  { variant: 'paging-next-url', point: 'next page', setting: null },
  { variant: 'paging-link-params', point: 'next page', setting: null },
  { variant: 'paging-next-relative', point: 'next page', setting: null },
  { variant: 'paging-has-more', point: 'next page', setting: 'paging offset' },
  { variant: 'paging-offset', point: 'next page', setting: 'paging offset' },
  { variant: 'cursor-param-page-token', point: 'cursor', setting: 'cursor-param' },
  { variant: 'cursor-param-after', point: 'cursor', setting: 'cursor-param' },
  { variant: 'cursor-nonce', point: 'cursor', setting: null },
  { variant: 'page-size-per-page', point: 'page size', setting: 'page-size-param' },
  { variant: 'numeric-strings', point: 'company fields', setting: null },
  { variant: 'no-meta', point: 'companies meta', setting: null },
  { variant: 'envelope-results', point: 'envelope', setting: null },
  { variant: 'contact-fields-email', point: 'contact fields', setting: 'contact-fields' },
  { variant: 'contact-date-dmy', point: 'contact dates', setting: 'date-format' },
  { variant: 'contact-date-epoch', point: 'contact dates', setting: null },
  { variant: 'contact-date-time', point: 'contact dates', setting: null },
  { variant: 'cursor-number', point: 'cursor', setting: null },
  { variant: 'has-more-null-cursor', point: 'next page', setting: 'paging offset' },
  { variant: 'meta-count', point: 'companies meta', setting: null },
  { variant: 'contact-date-zone', point: 'contact dates', setting: null },
  { variant: 'contact-emails-array', point: 'contact fields', setting: 'contact-fields business_email=emails' },
  { variant: 'errors-message', point: 'error body', setting: null },
  { variant: 'errors-array', point: 'error body', setting: null },
  { variant: 'errors-problem-json', point: 'error body', setting: null },
];

/**
 * With --verify ADDRESS, an address the sandbox calls `status` (the variants rename that word): the verify
 * point that differs, and its setting.
 */
const VERIFY_TABLE: ReadonlyArray<{ variant: VariantName; status: string; point: string; setting: string | null }> = [
  { variant: 'verify-path-moved', status: 'valid', point: 'verify path', setting: 'verify-path' },
  { variant: 'verify-post-only', status: 'valid', point: 'verify method', setting: 'verify-method POST' },
  { variant: 'verify-param-address', status: 'valid', point: 'verify param', setting: 'verify-param' },
  { variant: 'verify-millionverifier', status: 'valid', point: 'verify statuses', setting: 'verify-statuses ok=' },
  { variant: 'verify-deliverable', status: 'valid', point: 'verify statuses', setting: null },
  { variant: 'verify-upper-case', status: 'valid', point: 'verify statuses', setting: null },
  { variant: 'verify-zerobounce', status: 'risky', point: 'verify statuses', setting: null },
  { variant: 'verify-neverbounce', status: 'risky', point: 'verify statuses', setting: null },
];

/** Variants at no point doctor checks: what it says of them instead. */
const NOT_A_POINT: ReadonlyArray<{ variant: VariantName; why: string }> = [
  { variant: 'null-optional-fields', why: 'no point differs (its own test below)' },
  { variant: 'page-size-capped', why: 'doctor asks limit=1: a cap of 100 is not seen, and needs nothing' },
  { variant: 'envelope-nested', why: 'envelope: could not tell (no array of rows), and doctor is not ok' },
  { variant: 'upper-case-fields', why: 'company fields: could not tell (no domain in the row)' },
  { variant: 'contacts-grouped', why: 'contact fields: could not tell (no email field in a row)' },
  { variant: 'contact-empty-strings', why: 'no point differs: "" reads as null' },
  { variant: 'verify-result-envelope', why: 'a verify answer: only --verify would see it (not in VERIFY_TABLE yet)' },
  { variant: 'verify-is-valid', why: 'a verify answer: only --verify would see it (not in VERIFY_TABLE yet)' },
  { variant: 'rate-limit-no-retry-after', why: 'no point: the client waits and retries' },
  { variant: 'verify-no-credits', why: 'the account, not the contract: --verify could not tell (402)' },
  { variant: 'verify-credits-run-out', why: "its first paid answer is the contract's: --verify matches" },
];

const COMPANIES = 5000;
const sandboxes: TestSandbox[] = [];
afterAll(() => Promise.all(sandboxes.map((s) => s.close())));

async function doctorAgainst(variants: VariantName[], args: string[] = [], env: Record<string, string> = {}) {
  const sandbox = await startTestSandbox({ companies: COMPANIES, variants });
  sandboxes.push(sandbox);
  const run = await runInProcess(['doctor', ...args], { url: sandbox.url, apiKey: SANDBOX_KEYS.growth, env });
  return { run, verify: sandbox.stats().requests.verify, units: sandbox.stats().units.growth };
}

/** Addresses the sandbox's /verify calls each status, found with the plain client on a sandbox of its own. */
async function addressesByStatus(): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const sandbox = await startTestSandbox({ companies: COMPANIES });
  sandboxes.push(sandbox);
  const key = SANDBOX_KEYS.growth;
  const companies = await call(sandbox.url, `/api/v1/companies?${qs({ technology: 'WordPress', limit: 20 })}`, { key });
  const domains = (companies.body.data as Array<{ domain: string }>).map((row) => row.domain);
  const contacts = await call(sandbox.url, `/api/v1/contacts?${qs({ domain: domains.join(','), limit: 100 })}`, {
    key,
  });
  for (const { business_email: email } of contacts.body.data as Array<{ business_email: string | null }>) {
    if (email === null) continue;
    const answer = await call(sandbox.url, `/api/v1/verify?${qs({ email })}`, { key });
    if (!found.has(answer.body.data.status)) found.set(answer.body.data.status, email);
    if (found.has('valid') && found.has('risky')) return found;
  }
  throw new Error(`no valid and risky addresses among the sandbox contacts: ${[...found.keys()].join(', ')}`);
}

/**
 * Doctor's line for `point` says it differs (naming `setting`, if one adapts to it) and no "ok contract".
 * A setting to set is a failure (exit 5) naming it; a point the client reads on its own is not.
 */
function expectDiffers(
  run: { stdout: string; stderr: string; code: number | null },
  point: string,
  setting: string | null,
) {
  const line = run.stdout.split('\n').find((l) => l.includes(`contract  ${point}: `));
  expect(line, run.stdout + run.stderr).toMatch(setting ? `${point}: differs: set ${setting}` : `${point}: differs`);
  expect(run.stdout).not.toContain('ok contract:');
  if (setting) {
    expect(run.code).toBe(5);
    expect(run.stderr).toContain(`prospect config set ${setting}`);
  } else expect(run.code, run.stderr).toBe(0);
}

describe('doctor proves the contract', () => {
  it('against the sandbox: every point matches, "ok contract", exit 0, and no /verify call', async () => {
    const { run, verify } = await doctorAgainst([]);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split('\n').filter((line) => line.includes('contract'));
    expect(lines.length).toBeGreaterThanOrEqual(10);
    for (const line of lines.slice(0, -1)) expect(line).toMatch(/^ok {2}contract {2}[a-z ]+: matches \(/);
    expect(run.stdout).toContain('ok contract: every point checked matches docs/api-contract.md');
    expect(verify).toBe(0);
  });

  it.each(TABLE)('$variant: "$point" differs, naming $setting', async ({ variant, point, setting }) => {
    const { run, verify } = await doctorAgainst([variant]);
    expectDiffers(run, point, setting);
    expect(verify).toBe(0);
  });

  it('null-optional-fields: no point differs, exit 0', async () => {
    const { run, verify } = await doctorAgainst(['null-optional-fields']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toContain('differs');
    expect(run.stdout).toContain('ok contract: every point checked matches docs/api-contract.md');
    expect(verify).toBe(0);
  });
});

/** `doctor --verify ADDRESS`: the one paid call doctor makes, asked for by name, with consent, kept in the ledger. */
describe('doctor --verify ADDRESS', () => {
  let addresses: Map<string, string>;
  let address: string;
  beforeAll(async () => {
    addresses = await addressesByStatus();
    address = addresses.get('valid')!;
  }, 60_000);

  it('against the sandbox: the four verify points match, 1 unit, and a second run pays nothing', async () => {
    const env = { PROSPECT_CACHE_DIR: await scratchDir('doctor-verify-ledger') };
    // A sandbox of today: the result it checked is young enough for the ledger to reuse (--cache-ttl).
    const sandbox = await startTestSandbox({ companies: COMPANIES, asOf: todayUtc() });
    sandboxes.push(sandbox);
    const doctor = () =>
      runInProcess(['doctor', '--verify', address, '--yes'], { url: sandbox.url, apiKey: SANDBOX_KEYS.growth, env });
    const first = await doctor();
    expect(first.code, first.stderr).toBe(0);
    for (const point of ['verify path', 'verify method', 'verify param', 'verify statuses'])
      expect(first.stdout).toMatch(new RegExp(`^ok {2}contract {2}${point}: matches \\(`, 'm'));
    expect(first.stdout).toContain('ok contract: every point checked matches docs/api-contract.md');
    expect(first.stdout).toContain(`1 unit charged for ${address}`);
    expect(sandbox.stats().units.growth).toBe(1);
    const second = await doctor();
    expect(second.stdout, second.stderr).toMatch(/verify: could not tell \(.*kept in the ledger, not paid again/);
    expect(sandbox.stats().requests.verify).toBe(1);
    expect(sandbox.stats().units.growth).toBe(1);
  });

  it.each(VERIFY_TABLE)('$variant: "$point" differs, naming $setting', async ({ variant, status, point, setting }) => {
    const { run, verify } = await doctorAgainst([variant], ['--verify', addresses.get(status)!, '--yes']);
    expectDiffers(run, point, setting);
    // One call, refused or answered; never a second.
    expect(verify).toBe(1);
  });

  it('out of credits (402): the verify point could not tell, and nothing was charged', async () => {
    const { run, verify, units } = await doctorAgainst(['verify-no-credits'], ['--verify', address, '--yes']);
    expect(run.stdout, run.stderr).toMatch(/contract {2}verify: could not tell \(no verification credits \(402\)/);
    expect([verify, units]).toEqual([1, 0]);
  });

  it('every variant is in a table of doctor, or said why not', () => {
    const named = [...TABLE, ...VERIFY_TABLE, ...NOT_A_POINT].map((row) => row.variant);
    expect([...named].sort()).toEqual([...VARIANT_NAMES].sort());
  });

  it('off a terminal without --yes or a cap, and with a malformed address: exit 2, no /verify call', async () => {
    for (const args of [
      ['--verify', address],
      ['--verify', 'not-an-address', '--yes'],
    ]) {
      const { run, verify, units } = await doctorAgainst([], args);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(/nothing was spent/);
      expect([verify, units]).toEqual([0, 0]);
    }
  });
});
