/**
 * `prospect provenance EMAIL --state DIR` (issue 46): the runs of a --state directory that exported the
 * address, each with its date, job, host, output file, dataset and the address's last-confirmed day
 * then; "never exported" for another; still answered after `prospect forget`. The rows each run wrote
 * are read back from its output with python3's csv (test/helpers/csv.ts), not from prospect.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess, scratchDir } from '../../helpers/cli.js';
import { csvRecords } from '../../helpers/csv.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../../helpers/sandbox.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

describe('prospect provenance (a --state directory)', () => {
  it('names the runs that exported an address, and says "never exported" for one that was not', async () => {
    const dir = await scratchDir('provenance-');
    const env = {
      PROSPECT_CACHE_DIR: join(dir, 'cache'),
      PROSPECT_CONFIG_DIR: join(dir, 'config'),
      HOSTNAME: 'desk-1',
    };
    const run = (args: string[]) =>
      runInProcess(args, { url: sandbox.url, apiKey: SANDBOX_KEYS.growth, env, cwd: dir });
    const set = ['pipeline', '-t', 'Shopify', '--country', 'US', '--max', '3', '-s', 'cxo', '--state', 'weekly'];
    expect((await run([...set, '-o', 'week1.csv'])).code).toBe(0);
    expect((await run([...set, '-o', 'week2.csv'])).code).toBe(0);
    const week1 = csvRecords(await readFile(join(dir, 'week1.csv'), 'utf8'));
    const lead = week1.find((row) => row['business_email'] !== '')!;
    const address = lead['business_email']!;

    const answer = await run(['provenance', address.toUpperCase(), '--state', 'weekly']);
    expect(answer.code, answer.stderr).toBe(0);
    const lines = answer.stdout.trim().split('\n');
    expect(lines[0]).toBe(
      `${address.toUpperCase().replace(/@(.*)$/, (_, d: string) => `@${d.toLowerCase()}`)}: exported by 2 runs (--state weekly):`,
    );
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain('file week1.csv');
    expect(lines[2]).toContain('file week2.csv');
    for (const line of lines.slice(1)) {
      expect(line).toContain('job weekly');
      expect(line).toContain('host desk-1');
      expect(line).toContain(`last confirmed ${lead['business_email_last_seen']}`);
      expect(line).toContain(`source ${lead['source']}`);
      expect(line).toMatch(/^- \d{4}-\d{2}-\d{2}T\S+Z {2}run \S+ /);
    }

    const never = await run(['provenance', 'nobody.here@example.org', '--state', 'weekly']);
    expect(never.code).toBe(0);
    expect(never.stdout).toBe('nobody.here@example.org: never exported (--state weekly).\n');

    // A data-subject request after the erasure is still answered: the ledger keeps keyed hashes only.
    expect((await run(['forget', address])).code).toBe(0);
    expect((await run(['provenance', address, '--state', 'weekly'])).stdout).toContain('exported by 2 runs');
    const ledger = await readFile(join(dir, 'weekly', 'exported.sqlite'));
    expect(ledger.includes(Buffer.from(address.toLowerCase()))).toBe(false);
  });

  it('without --state or a state URL: exit 2, naming what it reads', async () => {
    const run = await runInProcess(['provenance', 'a@b.com'], { url: sandbox.url, apiKey: SANDBOX_KEYS.growth });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('provenance reads an exports ledger');
  });
});
