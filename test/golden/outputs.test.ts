/**
 * Golden outputs: every command in every format, on a fixed sandbox seed and snapshot day, with the
 * client's clock fixed by libfaketime (an independent program, so the clock is not a seam of the code
 * under test). The files under test/golden/outputs/ were recorded from the build before the issue-12
 * redesign; a redesign must reproduce them byte for byte. Re-record only for an intended change:
 *   UPDATE_GOLDEN=1 npx vitest run test/golden
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessUnder, runCli, runInProcess, scratchDir } from '../helpers/cli.js';
import { findProgram } from '../helpers/programs.js';
import { startTestSandbox, TEST_AS_OF, type TestSandbox } from '../helpers/sandbox.js';

const OUTPUTS = join(import.meta.dirname, 'outputs');
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const FAKETIME = findProgram('faketime');
const KEY = 'sandbox-growth';
const CLOCK = `${TEST_AS_OF} 12:00:00`;

const FILTERS = ['-t', 'Shopify', '-T', 'Klaviyo', '--country', 'united states', '--employee-range', '11-500'];
const FORMATS = ['csv', 'json', 'ndjson', 'table'] as const;

interface Case {
  name: string;
  args: (dir: string) => string[];
  input?: (dir: string) => string;
}

const cases: Case[] = [
  ...FORMATS.map((format) => ({
    name: `companies.${format}`,
    args: () => ['companies', ...FILTERS, '--max', '120', '--format', format],
  })),
  ...FORMATS.map((format) => ({
    name: `companies-wordpress.${format}`,
    args: () => ['companies', '-t', 'WordPress', '-t', 'WooCommerce', '--max', '40', '--format', format],
  })),
  ...FORMATS.map((format) => ({
    name: `contacts.${format}`,
    args: () => ['contacts', '--seniority', 'cxo,vp,director', '--format', format],
    input: (dir: string) => readFileSync(join(dir, 'domains.txt'), 'utf8'),
  })),
  ...FORMATS.map((format) => ({
    name: `contacts-per-company.${format}`,
    args: () => [
      'contacts',
      '--per-company',
      '2',
      '--limit',
      '50',
      '--stale',
      'drop',
      '--max-age',
      '1y',
      '--format',
      format,
    ],
    input: (dir: string) => readFileSync(join(dir, 'domains.txt'), 'utf8'),
  })),
  ...FORMATS.map((format) => ({
    name: `verify.${format}`,
    args: (dir: string) => [
      'verify',
      '--file',
      join(dir, 'people.csv'),
      '--budget',
      '40',
      '--no-cache',
      '--format',
      format,
    ],
  })),
  ...FORMATS.map((format) => ({
    name: `pipeline.${format}`,
    args: () => ['pipeline', ...FILTERS, '--seniority', 'cxo,vp', '--per-company', '3', '--format', format],
  })),
  {
    name: 'pipeline-verify.csv',
    args: () => [
      'pipeline',
      '-t',
      'Shopify',
      '--country',
      'germany',
      '--seniority',
      'cxo',
      '--stale',
      'verify',
      '--verify-budget',
      '25',
      '--no-cache',
      '--format',
      'csv',
    ],
  },
  { name: 'error-typo.txt', args: () => ['companies', '-t', 'Shopfy'] },
  { name: 'error-no-match.txt', args: () => ['companies', '-t', 'Shopify', '--country', 'antarctica'] },
  {
    name: 'error-nobody.txt',
    args: () => ['companies', '-t', 'Shopify', '--country', 'egypt', '--employee-range', '10001+'],
  },
  { name: 'error-bad-flag.txt', args: () => ['contacts', '--limit', '5000', 'acme.com'] },
];

let sandbox: TestSandbox;
let dir: string;

function fakeClock(args: string[]): { command: string; args: string[] } {
  return { command: 'faketime', args: [CLOCK, process.execPath, ...args] };
}

/**
 * The first case is the binary, spawned under faketime; the others run the same main() in one
 * process started under faketime (inProcessUnder): the same clock, without a process start per case.
 */
const underFakeClock = inProcessUnder(fakeClock);

describe.skipIf(FAKETIME.skip)('golden outputs (same bytes before and after a redesign)', () => {
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    dir = await scratchDir();
    // The domains the contacts goldens read: input, made in process (no date in it, so no fixed clock needed).
    const companies = await runInProcess(
      ['companies', ...FILTERS, '--max', '60', '--format', 'csv', '--columns', 'domain'],
      { url: sandbox.url, apiKey: KEY },
    );
    expect(companies.code, companies.stderr).toBe(0);
    writeFileSync(join(dir, 'domains.txt'), companies.stdout);
    const people = await underFakeClock(
      ['contacts', '--seniority', 'cxo,vp', '--per-company', '2', '--format', 'csv'],
      {
        url: sandbox.url,
        apiKey: KEY,
        input: companies.stdout,
      },
    );
    writeFileSync(join(dir, 'people.csv'), people.stdout);
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  for (const testCase of cases) {
    it(testCase.name, async () => {
      const args = testCase.args(dir);
      const run = await (testCase === cases[0] ? runCli : underFakeClock)(args, {
        url: sandbox.url,
        apiKey: KEY,
        input: testCase.input?.(dir) ?? '',
        wrap: fakeClock,
        env: { PROSPECT_CACHE_DIR: join(dir, 'cache') },
      });
      const actual = `exit ${run.code}\n--- stdout\n${run.stdout}--- stderr\n${run.stderr}`;
      const file = join(OUTPUTS, testCase.name);
      if (UPDATE) {
        mkdirSync(OUTPUTS, { recursive: true });
        writeFileSync(file, actual);
        return;
      }
      expect(existsSync(file), `no golden file ${file}; record with UPDATE_GOLDEN=1`).toBe(true);
      expect(actual).toBe(readFileSync(file, 'utf8'));
    });
  }
});
