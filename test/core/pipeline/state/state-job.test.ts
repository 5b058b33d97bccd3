/**
 * `prospect state` on local --state directories, in process: a real pipeline run over a route stub
 * makes the job, then list, show and reset read and change only it. A reset discards the unfinished
 * run, refuses (exit 6) while a live process holds the lock, and forgets exports only with consent.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPipeline, type PipelineFlags } from '../../../../src/core/pipeline/job.js';
import { listJobs, resetJob, showJob } from '../../../../src/core/pipeline/state/state-job.js';
import { PIPELINE_FLAGS } from '../../../../src/options/command-flags.js';
import { csvRecords } from '../../../helpers/csv.js';
import { flagsFrom, jobContext } from '../../../helpers/job-context.js';
import { routeStub } from '../../../helpers/route-stub.js';
import { routeTwoCompanies } from '../../../helpers/stub-rows.js';
import { scratchDir } from '../../../helpers/scratch.js';

/** One --only-new pipeline run on `state`: its exit code and how many leads it wrote. */
async function pipelineRun(state: string): Promise<{ code: number; leads: number }> {
  const stub = routeTwoCompanies(routeStub());
  const job = jobContext();
  const output = join(state, '..', `leads-${Math.random().toString(36).slice(2)}.csv`);
  const words = ['-t', 'Shopify', '--state', state, '--only-new', '--allow-empty', '-o', output];
  const flags = flagsFrom(PIPELINE_FLAGS, words) as PipelineFlags;
  const code = await job.exitCodeOf(runPipeline(job.ctx, flags, job.depsOver(stub, new Date('2026-06-30'))));
  expect(code, job.stderr()).toBe(0);
  return { code, leads: csvRecords(readFileSync(output, 'utf8')).length };
}

/** An unfinished run as a killed run leaves it: current/ with its checkpoint. */
async function leaveUnfinished(state: string, runId: string): Promise<void> {
  await mkdir(join(state, 'current'), { recursive: true, mode: 0o700 });
  const checkpoint = { version: 1, run_id: runId, pages_done: 3, rows_written: 40, counters: { companies_seen: 12 } };
  await writeFile(join(state, 'current', 'checkpoint.json'), JSON.stringify(checkpoint));
}

async function state(action: 'list' | 'show' | 'reset', target: string, flags: Record<string, unknown> = {}) {
  const job = jobContext();
  const run =
    action === 'list'
      ? listJobs(job.ctx, { state: target, format: 'csv', ...flags })
      : action === 'show'
        ? showJob(job.ctx, target, { format: 'csv', ...flags })
        : resetJob(job.ctx, target, flags);
  // A refusal's message is the error's (src/cli.ts prints it): kept with stderr.
  let refusal = '';
  const code = await job.exitCodeOf(
    run.catch((error: unknown) => {
      refusal = `${(error as Error).message} ${(error as { hint?: string }).hint ?? ''}`;
      throw error;
    }),
  );
  const rows = code === 0 && action !== 'reset' ? csvRecords(job.stdout()) : [];
  return { code, rows, stderr: job.stderr() + refusal };
}

describe('prospect state on a --state directory', () => {
  it('lists and shows the job: last run, exported leads, the unfinished run and its progress', async () => {
    const dir = join(await scratchDir('prospect-state-'), 'weekly');
    expect((await pipelineRun(dir)).leads).toBe(2);
    await leaveUnfinished(dir, 'run-unfinished');
    const { code, rows } = await state('list', dir);
    expect(code).toBe(0);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ job: dir, held_by: '', last_rows: '2', unfinished_run: 'run-unfinished' });
    expect(rows[0]!.exported).toBe('2');
    expect(rows[0]!.last_finished_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    const shown = await state('show', dir);
    const fields = Object.fromEntries(shown.rows.map((row) => [row.field, row.value]));
    expect(fields).toMatchObject({ unfinished_pages_done: '3', unfinished_rows_written: '40' });
    expect(fields.unfinished_companies_seen).toBe('12');
    expect(shown.rows.filter((row) => row.field!.startsWith('run '))).toHaveLength(1);
  });

  it('resets only the named job, keeps its exports, and forgets them only with --yes off a terminal', async () => {
    const root = await scratchDir('prospect-state-');
    const [mine, other] = [join(root, 'mine'), join(root, 'other')];
    await pipelineRun(mine);
    await pipelineRun(other);
    await leaveUnfinished(mine, 'run-mine');
    await leaveUnfinished(other, 'run-other');
    const reset = await state('reset', mine);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stderr).toContain('discarded unfinished run run-mine');
    expect(existsSync(join(mine, 'current'))).toBe(false);
    expect(existsSync(join(other, 'current', 'checkpoint.json'))).toBe(true);
    // Its exports stay: --only-new still hands out nothing new.
    expect((await pipelineRun(mine)).leads).toBe(0);
    const refused = await state('reset', mine, { forgetExports: true });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--yes');
    expect((await state('list', mine)).rows[0]!.exported).toBe('2');
    const forgot = await state('reset', mine, { forgetExports: true, yes: true });
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(forgot.stderr).toContain('forgot 2 exported leads');
    expect((await pipelineRun(mine)).leads).toBe(2);
    expect((await state('list', other)).rows[0]).toMatchObject({ exported: '2', unfinished_run: 'run-other' });
  });

  it('refuses a reset with exit 6 while a live process holds the job, and changes nothing', async () => {
    const dir = join(await scratchDir('prospect-state-'), 'held');
    await pipelineRun(dir);
    await leaveUnfinished(dir, 'run-held');
    const holder = { pid: process.pid, host: hostname(), started_at: new Date().toISOString(), command: 'pipeline' };
    await writeFile(join(dir, 'lock'), JSON.stringify(holder));
    expect((await state('list', dir)).rows[0]!.held_by).toBe(`${hostname()} pid ${process.pid}`);
    const refused = await state('reset', dir, { forgetExports: true, yes: true });
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain(`pid ${process.pid}`);
    expect(existsSync(join(dir, 'current', 'checkpoint.json'))).toBe(true);
    expect((await state('list', dir)).rows[0]!.exported).toBe('2');
  });

  it('on a terminal asks before forgetting exports: "n" keeps them (exit 2), "y" forgets them', async () => {
    const dir = join(await scratchDir('prospect-state-'), 'asked');
    await pipelineRun(dir);
    for (const [answer, code, exported] of [
      ['n', 2, '2'],
      ['y', 0, '0'],
    ] as const) {
      const job = jobContext();
      const keyboard = Object.assign(new PassThrough(), { isTTY: true });
      job.ctx.stdin = keyboard as unknown as NodeJS.ReadStream;
      (job.ctx.stderr as { isTTY?: boolean }).isTTY = true;
      const run = job.exitCodeOf(resetJob(job.ctx, dir, { forgetExports: true }));
      keyboard.write(`${answer}\n`);
      expect(await run).toBe(code);
      expect(job.stderr()).toContain('[y/N]');
      expect((await state('list', dir)).rows[0]!.exported).toBe(exported);
    }
  });

  it('says exit 2 for a directory that does not exist, and creates nothing', async () => {
    const dir = join(await scratchDir('prospect-state-'), 'missing');
    expect((await state('show', dir)).code).toBe(2);
    expect(existsSync(dir)).toBe(false);
  });
});
