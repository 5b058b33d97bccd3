/**
 * Issue 45's own case: `companies -t Shopify --state S` against the sandbox's October crawl, then
 * `--changes` against November's (same seed). The expected diff is computed here from the two
 * listings an independent client fetched.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess, scratchDir } from '../../helpers/cli.js';
import { changesInCsv, startMonthlyCrawls, type ExpectedChange, type MonthlyCrawls } from '../../helpers/crawl-stub.js';
import { SANDBOX_KEYS } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
let crawls: MonthlyCrawls;

beforeAll(async () => {
  crawls = await startMonthlyCrawls();
});
afterAll(async () => {
  await crawls?.close();
});

describe('companies --changes across two monthly crawls', () => {
  it('writes exactly the diff of the October and November listings', async () => {
    const { october, november, before, expected } = crawls;
    // A realistic share: a few percent, not none, not most.
    expect(expected.length).toBeGreaterThan(before.length / 100);
    expect(expected.length).toBeLessThan(before.length / 4);

    const home = await scratchDir('changes-monthly-');
    const state = join(home, 'S');
    const first = await runInProcess(['companies', '-t', 'Shopify', '--state', state, '-o', join(home, 'oct.csv')], {
      url: october.url,
      apiKey: KEY,
    });
    expect(first.code, first.stderr).toBe(0);
    const out = join(home, 'changes.csv');
    const second = await runInProcess(['companies', '-t', 'Shopify', '--state', state, '--changes', '-o', out], {
      url: november.url,
      apiKey: KEY,
    });
    expect(second.code, second.stderr).toBe(0);
    const written: ExpectedChange[] = changesInCsv(await readFile(out, 'utf8'));
    expect(written).toEqual(expected);
    for (const kind of ['new', 'changed', 'gone'])
      expect(
        written.some((row) => row.change === kind),
        kind,
      ).toBe(true);
  });
});
