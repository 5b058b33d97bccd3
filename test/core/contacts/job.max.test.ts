/**
 * `contacts --max N` records whether it cut anything (`stopped_at_max` in the run record), in every
 * place a cut can fall: inside the last domain of the input, at the end of a domain with more input
 * after it, and not at all (the input ran out first, or exactly at N). Main() in process against an
 * in-process sandbox; how many contacts a domain has comes from the independent client.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess, scratchDir } from '../../helpers/cli.js';
import { csvRecords } from '../../helpers/csv.js';
import { contactsOfDomain } from '../../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
let sandbox: RunningSandbox;
/** Two domains of the test dataset, and how many contacts each has. */
let first: { domain: string; contacts: number };
let second: { domain: string; contacts: number };

beforeAll(async () => {
  sandbox = await startTestSandbox();
  const sized = async (domain: string) => ({
    domain,
    contacts: (await contactsOfDomain(sandbox.url, KEY, domain)).length,
  });
  [first, second] = await Promise.all([sized('harborsupply.com'), sized('eastloom.com')]);
  // A few contacts each, none cut by the service's limit: every --max below falls where the test says.
  expect(first.contacts).toBeGreaterThanOrEqual(3);
  expect(second.contacts).toBeGreaterThanOrEqual(3);
  expect(second.contacts).toBeLessThan(1000);
});
afterAll(async () => {
  await sandbox?.close();
});

async function contactsRun(domains: string[], max: number) {
  const dir = await scratchDir();
  const summary = join(dir, 's.json');
  const run = await runInProcess(
    ['contacts', ...domains, '--max', String(max), '--format', 'csv', '--summary', summary],
    {
      url: sandbox.url,
      apiKey: KEY,
    },
  );
  expect(run.code, run.stderr).toBe(0);
  const record = JSON.parse(await readFile(summary, 'utf8')) as { rows: number; stopped_at_max: boolean };
  return { rows: csvRecords(run.stdout).length, record };
}

describe('contacts --max records whether it cut', () => {
  it('a cut inside the only domain: stopped_at_max', async () => {
    const { rows, record } = await contactsRun([first.domain], first.contacts - 1);
    expect(rows).toBe(first.contacts - 1);
    expect(record).toMatchObject({ rows: first.contacts - 1, stopped_at_max: true });
  });

  it('a cut inside the last of two domains: stopped_at_max', async () => {
    const max = first.contacts + 1;
    const { rows, record } = await contactsRun([first.domain, second.domain], max);
    expect(rows).toBe(max);
    expect(record).toMatchObject({ rows: max, stopped_at_max: true });
  });

  it('N reached at the end of a domain with another after it: stopped_at_max', async () => {
    const { rows, record } = await contactsRun([first.domain, second.domain], first.contacts);
    expect(rows).toBe(first.contacts);
    expect(record).toMatchObject({ stopped_at_max: true });
  });

  it('N reached exactly at the end of the input, or never: not stopped', async () => {
    for (const max of [first.contacts, first.contacts + 5]) {
      const { rows, record } = await contactsRun([first.domain], max);
      expect(rows).toBe(first.contacts);
      expect(record, `--max ${max}`).toMatchObject({ rows: first.contacts, stopped_at_max: false });
    }
  });
});
