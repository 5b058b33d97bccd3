/**
 * `prospect doctor` proves the contract (issue 42, point 4): against the sandbox every point checked
 * matches and it says "ok contract"; against each variant it says `differs` at the point that differs,
 * naming the setting where one adapts the client. In process (runInProcess), a sandbox per variant.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { VariantName } from '../../../src/sandbox/variant-names.js';
import { runInProcess } from '../../helpers/cli.js';
import { SANDBOX_KEYS, startTestSandbox, type TestSandbox } from '../../helpers/sandbox.js';

/** Each variant, the point doctor must say differs, and the setting it must name (null: the client reads it). */
const TABLE: ReadonlyArray<{ variant: VariantName; point: string; setting: string | null }> = [
  { variant: 'paging-link-header', point: 'next page', setting: null },
  { variant: 'paging-meta-next-cursor', point: 'next page', setting: null },
  { variant: 'paging-next-url', point: 'next page', setting: null },
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
  { variant: 'errors-message', point: 'error body', setting: null },
  { variant: 'errors-array', point: 'error body', setting: null },
  { variant: 'errors-problem-json', point: 'error body', setting: null },
];

const sandboxes: TestSandbox[] = [];
afterAll(() => Promise.all(sandboxes.map((s) => s.close())));

async function doctorAgainst(variants: VariantName[]) {
  const sandbox = await startTestSandbox({ companies: 5000, variants });
  sandboxes.push(sandbox);
  const run = await runInProcess(['doctor'], { url: sandbox.url, apiKey: SANDBOX_KEYS.growth });
  return { run, verify: sandbox.stats().requests.verify };
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
    const line = run.stdout.split('\n').find((l) => l.includes(`contract  ${point}: `));
    expect(line, run.stdout + run.stderr).toMatch(setting ? `${point}: differs: set ${setting}` : `${point}: differs`);
    expect(run.stdout).not.toContain('ok contract:');
    // A setting to set is a failure (exit 5) naming it; a point the client reads on its own is not.
    if (setting) {
      expect(run.code).toBe(5);
      expect(run.stderr).toContain(`prospect config set ${setting}`);
    } else expect(run.code, run.stderr).toBe(0);
    expect(verify).toBe(0);
  });
});
