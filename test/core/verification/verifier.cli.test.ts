/**
 * Issue 26, point 9: a paid pipeline killed with SIGTERM and run again is charged exactly once per
 * address, writes the bytes of an uninterrupted run, and the killed run's summary states the units
 * the service charged. Also against a service that does not honour Idempotency-Key, with --no-cache
 * (only the run's own state knows what it paid), and for a capped run killed while it pays. Money
 * is the sandbox's unit counter; every run has a cache directory of its own (test/helpers/cli.ts),
 * so nothing but the --state directory carries what was paid from one run to the next. Each case has
 * sandboxes of its own, so the three run at once (they mostly wait on the service's latency).
 *
 * The run killed is spawned (SIGTERM is a process's), and so is the first case's resume, as a user
 * runs it again. The uninterrupted reference and the other resumes read and write only the state,
 * the output and the summary: the same main() in process (runInProcess, the same environment, exit
 * code and key-leak checks).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { finishCli, runCli, runInProcess, scratchDir, startCli } from '../../helpers/cli.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox, PAID_PIPELINE_SET } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
const SET = PAID_PIPELINE_SET;

const units = (sandbox: RunningSandbox): number => sandbox.stats().units.growth;

/** The uninterrupted run, on a sandbox of its own (the same seed gives the same answers): its bytes and cost. */
async function uninterrupted(spend: string[]): Promise<{ bytes: string; charged: number }> {
  const dir = await scratchDir();
  const reference = await startTestSandbox();
  try {
    const run = await runInProcess(
      ['pipeline', ...SET, ...spend, '--state', join(dir, 'state'), '-o', join(dir, 'leads.csv')],
      { url: reference.url, apiKey: KEY },
    );
    expect(run.code, run.stderr).toBe(0);
    return { bytes: await readFile(join(dir, 'leads.csv'), 'utf8'), charged: units(reference) };
  } finally {
    await reference.close();
  }
}

/**
 * One uninterrupted run per spend, shared by the cases that run at once. --no-cache is left out of the
 * key: a run on a cache directory of its own remembers nothing from before, so its bytes and charge are
 * those of the same run with the cache (a resume that differed from either would fail).
 */
const references = new Map<string, Promise<{ bytes: string; charged: number }>>();
function referenceFor(spend: string[]): Promise<{ bytes: string; charged: number }> {
  const key = spend.filter((flag) => flag !== '--no-cache');
  const name = key.join(' ');
  if (!references.has(name)) references.set(name, uninterrupted(key));
  return references.get(name)!;
}

/** Starts the run, sends SIGTERM once the service has charged `after` units, and waits for it to end. */
async function killedAfter(sandbox: RunningSandbox, args: string[], after: number) {
  const before = units(sandbox);
  const child = startCli(args, { url: sandbox.url, apiKey: KEY });
  child.stdin!.end();
  const finished = finishCli(child, { apiKey: KEY });
  while (units(sandbox) - before < after && child.exitCode === null)
    await new Promise((resolve) => setTimeout(resolve, 5));
  child.kill('SIGTERM');
  const run = await finished;
  return { run, charged: units(sandbox) - before };
}

describe('a paid pipeline killed and resumed pays once per address, for the bytes of an uninterrupted run', () => {
  // The last column: whether the resume is spawned too.
  it.concurrent.for<[string, string[], boolean, boolean]>([
    ['--yes, a service that honours Idempotency-Key', ['--yes'], false, true],
    ['--yes --no-cache, a service that ignores Idempotency-Key', ['--yes', '--no-cache'], true, false],
    ['--verify-budget, killed while it pays the oldest', ['--verify-budget', '60'], true, false],
  ])('%s', { timeout: 90_000 }, async ([_name, spend, ignoreIdempotencyKey, resumeSpawned], { expect }) => {
    const expected = await referenceFor(spend);
    expect(expected.charged).toBeGreaterThan(40);
    // Latency, so that the kill lands while paid calls are in flight.
    const sandbox = await startTestSandbox({ latencyMs: 40, ignoreIdempotencyKey });
    try {
      const dir = await scratchDir();
      const args = [
        'pipeline',
        ...SET,
        ...spend,
        '--state',
        join(dir, 'state'),
        '-o',
        join(dir, 'leads.csv'),
        '--summary',
        join(dir, 'run.json'),
      ];
      const killed = await killedAfter(sandbox, args, 10);
      expect(killed.run.code, killed.run.stderr).toBe(143);
      expect(killed.charged).toBeLessThan(expected.charged);
      // The summary of the killed run says what the service charged, not what was reserved.
      const summary = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
      expect(summary.exit_code).toBe(143);
      expect(summary.verification.units_spent).toBe(killed.charged);

      const resumed = await (resumeSpawned ? runCli : runInProcess)(args, { url: sandbox.url, apiKey: KEY });
      expect(resumed.code, resumed.stderr).toBe(0);
      // A fresh sandbox: everything it charged, over both runs, is what one uninterrupted run costs.
      expect(units(sandbox)).toBe(expected.charged);
      expect(await readFile(join(dir, 'leads.csv'), 'utf8')).toBe(expected.bytes);
      const done = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
      expect(done.verification.units_spent).toBe(expected.charged);
    } finally {
      await sandbox.close();
    }
  });
});
