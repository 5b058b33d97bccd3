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

  it('never exceeds --budget and marks the rest unchecked', async () => {
    const cache = await scratchDir();
    const before = await units();
    const run = await inProcess(['verify', '--budget', '3', '--format', 'ndjson'], {
      input: addresses(10, 100).join('\n'),
      env: { PROSPECT_CACHE_DIR: cache },
    });
    expect(run.code).toBe(0);
    expect((await units()) - before).toBe(3);
    const rows = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows.filter((row) => row.verification === 'unchecked')).toHaveLength(7);
  });

  it('--dry-run spends nothing and says what a run would spend', async () => {
    const cache = await scratchDir();
    const before = await units();
    const run = await inProcess(['verify', '--dry-run', '--budget', '4'], {
      input: addresses(6, 200).join('\n'),
      env: { PROSPECT_CACHE_DIR: cache },
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/would spend 4 units/);
    expect(await units()).toBe(before);
  });

  it('keeps the input CSV columns and adds verification and verified_at', async () => {
    const cache = await scratchDir();
    const input = 'name,business_email\r\nAda,ada@example-9.com\r\nBob,bob@example-9.com\r\n';
    const run = await inProcess(['verify', '--yes'], { input, env: { PROSPECT_CACHE_DIR: cache } });
    const rows = csvRecords(run.stdout);
    expect(Object.keys(rows[0]!)).toEqual(['name', 'business_email', 'verification', 'verified_at', 'email_class']);
    expect(rows.map((row) => row.name)).toEqual(['Ada', 'Bob']);
    expect(rows.every((row) => row.verified_at !== '')).toBe(true);
  });
});
