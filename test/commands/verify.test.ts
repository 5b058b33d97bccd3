/**
 * `prospect verify` as a user runs it, against a sandbox that counts the units it charges: one spawned
 * run for what only a process shows (its exit code, stdout and stderr), and its rerun through the same
 * main() in process. The job's logic (the budget, --dry-run, the columns kept) is tested through its
 * seam, in milliseconds: test/core/verification/job.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir } from '../helpers/cli.js';
import { csvRecords } from '../helpers/csv.js';
import { sandboxStats } from '../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, todayUtc, type RunningSandbox } from '../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox({ seed: 11, asOf: todayUtc() });
});
afterAll(async () => {
  await sandbox?.close();
});

function prospect(args: string[], extra: Parameters<typeof runCli>[1] = {}) {
  return runCli(args, { url: sandbox.url, apiKey: KEY, ...extra });
}
/** The same main() in process: the units are the sandbox's to count, once the first run is spawned. */
function inProcess(args: string[], extra: Parameters<typeof runInProcess>[1] = {}) {
  return runInProcess(args, { url: sandbox.url, apiKey: KEY, ...extra });
}

describe('prospect verify (against the sandbox)', () => {
  const addresses = (count: number, offset = 0) =>
    Array.from({ length: count }, (_, index) => `person${index + offset}@example-${index + offset}.com`);
  const units = async () => (await sandboxStats(sandbox.url)).units.growth as number;

  it('pays once per unique valid address, reports malformed ones, and a second run within the TTL pays nothing', async () => {
    const cache = await scratchDir();
    const env = { PROSPECT_CACHE_DIR: cache };
    const input = [...addresses(5), 'PERSON0@example-0.com', 'not-an-address', 'a@@b.com', ''].join('\n');
    const before = await units();
    const run = await prospect(['verify', '--yes', '--format', 'csv'], { input, env });
    expect(run.code).toBe(0);
    expect((await units()) - before).toBe(5);
    expect(run.stderr).toMatch(/skipped 2 invalid email addresses \(never sent\)/);
    const rows = csvRecords(run.stdout);
    expect(rows).toHaveLength(8);
    expect(rows.filter((row) => row.verification === 'malformed')).toHaveLength(2);
    expect(rows[5]!.verification).toBe(rows[0]!.verification);
    const again = await inProcess(['verify', '--yes', '--format', 'csv'], { input, env });
    expect(again.stdout).toBe(run.stdout);
    expect((await units()) - before).toBe(5);
  });
});
