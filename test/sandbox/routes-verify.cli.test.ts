/**
 * The sandbox never dates anything in the future (src/sandbox/routes-verify.ts), seen as a user sees
 * it: `prospect --sandbox` serves today's snapshot, and no verified_at it writes is later than the run.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('prospect --sandbox verified_at (spawned)', () => {
  it('is never later than the moment the run ended', async () => {
    // Up to 30 paid checks of the in-command sandbox; before the fix about half of them fell later today.
    const run = await runCli(['--sandbox', 'contacts', 'savor.co.uk', '--seniority', 'cxo', '--max-age', '1d', '--stale', 'verify', '--verify-budget', '30', '--format', 'ndjson']);
    const ended = Date.now();
    expect(run.code, run.stderr).toBe(0);
    const verified = run.stdout.trimEnd().split('\n').map((line) => JSON.parse(line)).filter((row) => row.verified_at);
    expect(verified).toHaveLength(30);
    for (const row of verified) expect(Date.parse(row.verified_at), row.verified_at).toBeLessThanOrEqual(ended);
  });
});
