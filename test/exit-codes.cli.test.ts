/**
 * Issue 26, point 5: one rule for every command that writes rows. An empty result is exit 3 with its
 * reason on stderr (off a terminal too), no file, and the reason in --summary's no_match_reason; with
 * --allow-empty it is exit 0, an empty file and one warning line, the reason still recorded. Which
 * sets are empty is found with the independent client, not with prospect.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir } from './helpers/cli.js';
import { allCompanies, contactsOfDomain } from './helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from './helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
let sandbox: RunningSandbox;
/** Domains the service has no named contact for. */
let noContacts: string[];
/** A filter whose companies have no contact at cxo: the pipeline lists companies, and has no lead. */
const NO_CXO = ['-t', 'Shopify', '--country', 'brazil', '--seniority', 'cxo'];

beforeAll(async () => {
  sandbox = await startTestSandbox();
  const brazil = await allCompanies(sandbox.url, KEY, { technology: 'Shopify', country: 'brazil' });
  expect(brazil.length).toBeGreaterThan(0);
  for (const company of brazil)
    expect(await contactsOfDomain(sandbox.url, KEY, company.domain, 'cxo'), company.domain).toEqual([]);
  const listed = await allCompanies(sandbox.url, KEY, { technology: 'WordPress', country: 'india' });
  noContacts = [];
  for (const company of listed) {
    if (noContacts.length === 2) break;
    if ((await contactsOfDomain(sandbox.url, KEY, company.domain)).length === 0) noContacts.push(company.domain);
  }
  expect(noContacts).toHaveLength(2);
});
afterAll(async () => {
  await sandbox?.close();
});

const cases: Array<[string, string[]]> = [
  ['companies: filters that match nobody', ['companies', '-t', 'Shopify', '-t', 'WordPress']],
  ['contacts: domains without a named contact', () => ['contacts', ...noContacts]] as never,
  ['pipeline: filters that match nobody', ['pipeline', '-t', 'Shopify', '-t', 'WordPress']],
  ['pipeline: companies without a lead', ['pipeline', ...NO_CXO]],
];
const argsOf = (args: string[] | (() => string[])) => (typeof args === 'function' ? args() : args);

describe('an empty result is exit 3 in every command, or exit 0 with --allow-empty', () => {
  it.each(cases)('%s', async (name, args) => {
    const dir = await scratchDir();
    const out = join(dir, 'out.csv');
    const summary = join(dir, 'run.json');
    // The first case spawned, as a user (or cron) runs it; the others run the same main() in process.
    const run = name === cases[0]![0] ? runCli : runInProcess;
    const empty = await run([...argsOf(args), '-o', out, '--summary', summary], { url: sandbox.url, apiKey: KEY });
    expect(empty.code, empty.stderr).toBe(3);
    const [reason, hint, ...rest] = empty.stderr.trim().split('\n');
    expect(reason).toMatch(/^prospect: no (company matched|contact to write|lead to write)/);
    expect(hint).toMatch(/--allow-empty/);
    expect(rest).toEqual([]);
    expect(existsSync(out)).toBe(false);
    const failed = JSON.parse(readFileSync(summary, 'utf8'));
    expect(failed.exit_code).toBe(3);
    expect(`prospect: ${failed.no_match_reason}`).toBe(reason);

    const allowed = await run([...argsOf(args), '-o', out, '--summary', summary, '--allow-empty'], {
      url: sandbox.url,
      apiKey: KEY,
    });
    expect(allowed.code, allowed.stderr).toBe(0);
    // One warning line, on a pipe as on a terminal.
    expect(allowed.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^warning: no .* Wrote an empty result \(--allow-empty\)\.$/),
    ]);
    expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(1);
    const succeeded = JSON.parse(readFileSync(summary, 'utf8'));
    expect(succeeded.exit_code).toBe(0);
    expect(succeeded.no_match_reason).toBe(failed.no_match_reason);
  });
});
