/**
 * The sandbox never dates anything in the future (src/sandbox/routes-verify.ts), seen as a user sees
 * it: against a sandbox of today (what `prospect --sandbox` serves), no verified_at that prospect
 * writes is later than the end of the run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { SANDBOX_KEYS, startTestSandbox, todayUtc, type RunningSandbox } from '../helpers/sandbox.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ asOf: todayUtc() });
});
afterAll(async () => {
  await sandbox?.close();
});

describe('verified_at of a sandbox of today (spawned)', () => {
  it('is never later than the moment the run ended', async () => {
    // 30 paid checks; before the fix, every one whose hashed time of day was still to come fell in the future.
    const run = await runCli(
      [
        'contacts',
        'savor.co.uk',
        '--seniority',
        'cxo',
        '--max-age',
        '1d',
        '--stale',
        'verify',
        '--verify-budget',
        '30',
        '--format',
        'ndjson',
      ],
      {
        url: sandbox.url,
        apiKey: SANDBOX_KEYS.growth,
      },
    );
    const ended = Date.now();
    expect(run.code, run.stderr).toBe(0);
    const verified = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((row) => row.verified_at);
    expect(verified).toHaveLength(30);
    for (const row of verified) expect(Date.parse(row.verified_at), row.verified_at).toBeLessThanOrEqual(ended);
  });
});
