/**
 * The promise of a split listing, through the binary: the bytes of one cursor, and a pipeline
 * killed mid-run resumes the same parts to the same bytes. The planner, the proof and the merge are
 * tested in-process (companies/split.test.ts, companies/walk.test.ts).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishCli, runCli, runInProcess, scratchDir, startCli } from '../../helpers/cli.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../../helpers/sandbox.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ companies: 20_000, latencyMs: 10 });
});
afterAll(async () => {
  await sandbox?.close();
});

const options = (extra: Parameters<typeof runCli>[1] = {}) => ({
  url: sandbox.url,
  apiKey: SANDBOX_KEYS.growth,
  timeoutMs: 120_000,
  ...extra,
});

describe('a listing split into parts', () => {
  it('writes the bytes of one cursor; a pipeline killed mid-run resumes its parts to the same bytes', async () => {
    // --concurrency 8 spawned; the single cursor it must equal in process (the same main()).
    const companies = (concurrency: string) =>
      (concurrency === '1' ? runInProcess : runCli)(
        [
          '--page-size',
          '100',
          '--verbose',
          'companies',
          '-t',
          'Shopify',
          '-T',
          'Klaviyo',
          '--concurrency',
          concurrency,
          '-f',
          'json',
        ],
        options(),
      );
    const [split, single] = [await companies('8'), await companies('1')];
    expect(split.code, split.stderr).toBe(0);
    expect(split.stderr).toMatch(/as 8 parts at once/);
    expect(single.stderr).not.toMatch(/parts at once/);
    expect(JSON.parse(single.stdout).data.length).toBeGreaterThan(500);
    expect(split.stdout).toBe(single.stdout);

    const pipeline = ['--page-size', '100', 'pipeline', '-t', 'Shopify', '--seniority', 'cxo'];
    const reference = await scratchDir();
    // --concurrency 4: one cursor (a quarter of 4 is one part), four contacts calls at once.
    // The reference in process; the run that is killed and resumed is spawned.
    const clean = await runInProcess(
      [...pipeline, '--concurrency', '4', '-o', join(reference, 'leads.csv')],
      options({ cwd: reference }),
    );
    expect(clean.code, clean.stderr).toBe(0);

    const work = await scratchDir();
    const state = join(work, 'state');
    // A pipeline's listing gets a quarter of --concurrency: 32 makes 8 parts.
    const args = [...pipeline, '--concurrency', '32', '--state', state, '-o', join(work, 'leads.csv')];
    const child = startCli(args, options({ cwd: work }));
    const killed = finishCli(child, options({ cwd: work }));
    const checkpointPath = join(state, 'current', 'checkpoint.json');
    let checkpoint: { pages_done: number; positions: unknown[]; partition?: { queries: unknown[] } } | undefined;
    for (
      let waited = 0;
      waited < 60_000 && child.exitCode === null && !(checkpoint && checkpoint.pages_done >= 2);
      waited += 20
    ) {
      await sleep(20);
      const text = await readFile(checkpointPath, 'utf8').catch(() => '');
      checkpoint = text ? JSON.parse(text) : undefined;
    }
    child.kill('SIGKILL');
    expect((await killed).signal).toBe('SIGKILL');
    // The checkpoint keeps the parts and where each stands.
    const kept = JSON.parse(await readFile(checkpointPath, 'utf8'));
    expect(kept.partition.queries).toHaveLength(8);
    expect(kept.positions).toHaveLength(8);
    expect(kept.listing_done).toBe(false);

    const resumed = await runCli(['--verbose', ...args], options({ cwd: work }));
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/Resuming the unfinished run/);
    expect(await readFile(join(work, 'leads.csv'), 'utf8')).toBe(await readFile(join(reference, 'leads.csv'), 'utf8'));
  }, 240_000);
});
