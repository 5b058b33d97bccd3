/**
 * Issue 34, point 3: --verify-budget is a hard ceiling, and the record never understates. Against a
 * `prospect sandbox` process that cuts half its answers mid-body (after charging for them), with and
 * without honouring Idempotency-Key, every command that pays (verify, contacts --stale verify,
 * pipeline with and without --state) makes the sandbox charge at most the budget, and the summary's
 * units are the sandbox's count where the key is honoured, and never below it where it is not.
 * Money is measured by the sandbox's unit counter (GET /_sandbox/stats), never by what prospect says.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, scratchDir } from '../../helpers/cli.js';
import { call, qs, sandboxStats } from '../../helpers/independent-client.js';
import {
  SANDBOX_KEYS,
  spawnSandbox,
  startTestSandbox,
  TEST_AS_OF,
  TEST_COMPANIES,
  TEST_SEED,
  type SandboxProcess,
} from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
/** The addresses `verify` is given: 19, as in the issue. */
const ADDRESSES = Array.from({ length: 19 }, (_, index) => `person${index + 1}@example.com`);

interface Verification {
  budget: number | null;
  units_spent: number;
  units_spent_at_most: number;
  answers_lost: number;
  idempotency: 'confirmed' | 'not confirmed';
  unchecked: number;
}

let domains: string[];

beforeAll(async () => {
  // The domains contacts is given, from a fault-free sandbox over the same dataset.
  const clean = await startTestSandbox();
  try {
    const { body } = await call(
      clean.url,
      `/api/v1/companies?${qs({ technology: 'Shopify', country: 'united states', limit: 8 })}`,
      { key: KEY },
    );
    domains = (body.data as Array<{ domain: string }>).map((company) => company.domain);
  } finally {
    await clean.close();
  }
  expect(domains).toHaveLength(8);
});

/** Long enough for every run of a describe block below. */
const SANDBOX_LIFETIME_MS = 600_000;

/** A sandbox process over the test dataset whose every other answer is cut mid-body, after its unit is charged. */
function faultySandbox(extra: string[]): SandboxProcess {
  return spawnSandbox(
    [
      '--port',
      '0',
      '--seed',
      String(TEST_SEED),
      '--companies',
      String(TEST_COMPANIES),
      '--as-of',
      TEST_AS_OF,
      '--fail-rate',
      '0.5',
      '--faults',
      'reset-mid-body',
      '--fault-seed',
      '3',
      ...extra,
    ],
    { timeoutMs: SANDBOX_LIFETIME_MS },
  );
}

interface PaidRun {
  name: string;
  args: (dir: string) => Promise<string[]>;
  /** A tight budget (fewer units than addresses to pay for), a loose one (room for every retry), or both. */
  budgets: number[];
}

const RUNS: PaidRun[] = [
  {
    name: 'verify',
    async args(dir) {
      await writeFile(join(dir, 'addresses.txt'), `${ADDRESSES.join('\n')}\n`);
      return ['verify', '--file', join(dir, 'addresses.txt'), '--format', 'csv'];
    },
    budgets: [5, 60],
  },
  {
    name: 'contacts --stale verify',
    args: async () => ['contacts', ...domains, '--stale', 'verify', '--format', 'csv'],
    budgets: [5, 60],
  },
  {
    name: 'pipeline --stale verify',
    args: async () => [
      'pipeline',
      '-t',
      'Shopify',
      '--country',
      'united states',
      '--max',
      '8',
      '--stale',
      'verify',
      '--format',
      'csv',
    ],
    budgets: [5],
  },
  {
    name: 'pipeline --state --stale verify',
    args: async (dir) => [
      'pipeline',
      '-t',
      'Shopify',
      '--country',
      'united states',
      '--max',
      '8',
      '--stale',
      'verify',
      '--state',
      join(dir, 'state'),
      '-o',
      join(dir, 'leads.csv'),
    ],
    budgets: [60],
  },
];

/** Retries back off up to 30 s each: a run that meets several cut answers in a row takes a while. */
const RUN_TIMEOUT_MS = 150_000;

for (const variant of [
  { name: 'a sandbox that honours Idempotency-Key', flags: [], honoured: true },
  { name: 'a sandbox that ignores Idempotency-Key', flags: ['--ignore-idempotency'], honoured: false },
]) {
  describe(`against ${variant.name}, cutting half its answers mid-body`, () => {
    let sandbox: SandboxProcess;
    let url: string;
    beforeAll(async () => {
      sandbox = faultySandbox(variant.flags);
      url = await sandbox.url;
    });
    afterAll(async () => {
      await sandbox?.stop();
    });
    const charged = async (): Promise<number> => (await sandboxStats(url)).units.growth as number;

    for (const paid of RUNS) {
      for (const budget of paid.budgets) {
        it(
          `${paid.name} --verify-budget ${budget}: the sandbox charges at most ${budget}; the record never understates`,
          async () => {
            const dir = await scratchDir();
            const summaryPath = join(dir, 'summary.json');
            const before = await charged();
            // Ten retries: a request that meets six cut answers in a row would otherwise end the run (exit 5).
            const args = [
              ...(await paid.args(dir)),
              '--verify-budget',
              String(budget),
              '--max-retries',
              '10',
              '--summary',
              summaryPath,
            ];
            const run = await runCli(args, { url, apiKey: KEY, timeoutMs: RUN_TIMEOUT_MS });
            const units = (await charged()) - before;
            const verification = JSON.parse(await readFile(summaryPath, 'utf8')).verification as Verification;

            expect(run.code, run.stderr).toBe(0);
            expect(units).toBeGreaterThan(0);
            // The ceiling, then the record: what was charged for certain, and at most, brackets the sandbox's count.
            expect(units).toBeLessThanOrEqual(budget);
            expect(verification.units_spent).toBeLessThanOrEqual(units);
            expect(verification.units_spent_at_most).toBeGreaterThanOrEqual(units);
            expect(verification.units_spent_at_most).toBeLessThanOrEqual(budget);
            // The answers were cut: the test met what it is about.
            expect(verification.answers_lost).toBeGreaterThan(0);
            if (variant.honoured) {
              expect(verification.idempotency).toBe('confirmed');
              // Every cut answer was charged, so "at most" is exact here, and with room for every retry
              // each address got its answer: the units charged are the sandbox's count.
              expect(verification.units_spent_at_most).toBe(units);
              if (budget === 60) expect(verification.units_spent).toBe(units);
            } else {
              expect(verification.idempotency).toBe('not confirmed');
            }
            // The closing line says the most that could have been charged whenever it is more than the units counted.
            if (verification.units_spent_at_most > verification.units_spent)
              expect(run.stderr).toContain(
                `at most ${verification.units_spent_at_most} units charged, ${verification.units_spent} of them for certain`,
              );
            else expect(run.stderr).not.toContain('at most');
          },
          RUN_TIMEOUT_MS + 10_000,
        );
      }
    }
  });
}
