/**
 * Issue 43 point 7: the last stderr line of a paying run that fails or is stopped says what it
 * spent and whether a re-run pays for it again: kept in the verification ledger, kept in the
 * --state directory, or, with --no-cache, not kept. The units are the sandbox's count.
 *
 * The failures (a service that goes down mid-run) run main() in process (runInProcess): no signal
 * is involved. Ctrl-C is a process's: that case is spawned.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { finishCli, runInProcess, scratchDir, startCli } from '../../helpers/cli.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
const ADDRESSES = Array.from({ length: 12 }, (_, index) => `person${index + 1}@example.com`);
const units = (sandbox: RunningSandbox): number => sandbox.stats().units.growth;
const lastLine = (stderr: string) => stderr.trimEnd().split('\n').at(-1);

async function addressesFile(): Promise<string> {
  const path = join(await scratchDir(), 'addresses.txt');
  await writeFile(path, `${ADDRESSES.join('\n')}\n`);
  return path;
}

const PAID = ['--verify-budget', '20', '--concurrency', '1', '--max-retries', '0', '--format', 'csv'];

describe('a paying run that stops says in its last line what it spent and what is kept', () => {
  it.for<[string, string[], RegExp]>([
    ['verify', [], /their results are kept in the verification ledger: a re-run within --cache-ttl does not pay/],
    ['verify --no-cache', ['--no-cache'], /their results are not kept \(--no-cache\): a re-run pays for them again\.$/],
  ])('%s, the service down after 4 calls: exit 5', async ([, extra, kept]) => {
    // Every request after the fourth is a 500, and no retry: the run ends in exit 5 after 4 paid answers.
    const sandbox = await startTestSandbox({ faultsAfter: 4, failRate: 1, faults: ['500'] });
    try {
      const run = await runInProcess(['verify', '--file', await addressesFile(), ...PAID, ...extra], {
        url: sandbox.url,
        apiKey: KEY,
      });
      expect(run.code, run.stderr).toBe(5);
      expect(units(sandbox)).toBe(4);
      expect(lastLine(run.stderr)).toMatch(/^prospect: spent 4 units before the run stopped; /);
      expect(lastLine(run.stderr)).toMatch(kept);
    } finally {
      await sandbox.close();
    }
  });

  it('pipeline --state --no-cache: the results are kept in the --state directory for the resume', async () => {
    const sandbox = await startTestSandbox({ faultsAfter: 12, failRate: 1, faults: ['500'] });
    try {
      const dir = await scratchDir();
      const run = await runInProcess(
        ['pipeline', '-t', 'Shopify', '--max', '10', '--stale', 'verify', ...PAID, '--no-cache'].concat([
          '--state',
          join(dir, 'state'),
          '-o',
          join(dir, 'leads.csv'),
        ]),
        { url: sandbox.url, apiKey: KEY },
      );
      expect(run.code, run.stderr).toBe(5);
      const charged = units(sandbox);
      expect(charged).toBeGreaterThan(0);
      expect(lastLine(run.stderr)).toBe(
        `prospect: spent ${charged} unit${charged === 1 ? '' : 's'} before the run stopped; their results are kept ` +
          'in the --state directory: the same command again resumes without paying for them.',
      );
    } finally {
      await sandbox.close();
    }
  });

  it('Ctrl-C while paying: exit 130, and the last line gives the units charged', async () => {
    const sandbox = await startTestSandbox({ latencyMs: 60 });
    try {
      const child = startCli(
        ['verify', '--file', await addressesFile(), ...PAID, '-o', join(await scratchDir(), 'out.csv')],
        {
          url: sandbox.url,
          apiKey: KEY,
        },
      );
      const finished = finishCli(child, { apiKey: KEY });
      while (units(sandbox) < 3 && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
      child.kill('SIGINT');
      const run = await finished;
      expect(run.code, run.stderr).toBe(130);
      const charged = units(sandbox);
      expect(charged).toBeLessThan(ADDRESSES.length);
      expect(run.stderr).toContain('prospect: interrupted by SIGINT; nothing was left half-written.');
      expect(lastLine(run.stderr)).toBe(
        `prospect: spent ${charged} units before the run stopped; their results are kept in the verification ` +
          'ledger: a re-run within --cache-ttl does not pay for them again.',
      );
    } finally {
      await sandbox.close();
    }
  });
});
