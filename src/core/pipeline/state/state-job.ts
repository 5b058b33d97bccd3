/**
 * `prospect state list|show|reset`: a job named by its --state directory or as pg:NAME (the team
 * store). Lists and details are data on stdout (a table on a terminal, CSV on a pipe, or --format);
 * a reset writes what it discarded as one row, and says it on stderr.
 */
import { createInterface } from 'node:readline/promises';
import { CancelledError, CliError, ExitCode, UsageError } from '../../../exit-codes.js';
import { resolveFormat } from '../../../io/output.js';
import { streamSink } from '../../../io/sink.js';
import { createRowWriter } from '../../../io/writers.js';
import type { RunContext } from '../../../runtime/context.js';
import { remoteJobName, requireTeamStore } from '../../state-store/index.js';
import type { JobDetail, JobReset, JobSummary } from '../../state-store/jobs.js';
import { resetLocalJob, showLocalJob } from './jobs.js';

export interface StateFlags {
  state?: string | undefined;
  format?: string | undefined;
  forgetExports?: boolean | undefined;
  yes?: boolean | undefined;
}

const SUMMARY_COLUMNS = ['job', 'held_by', 'last_finished_at', 'last_rows', 'unfinished_run', 'exported'] as const;

async function writeRows<Row extends object>(
  ctx: RunContext,
  flags: StateFlags,
  names: readonly (keyof Row & string)[],
  rows: Row[],
): Promise<void> {
  const format = resolveFormat({ format: flags.format, stdoutIsTTY: Boolean(ctx.stdout.isTTY) });
  const writer = await createRowWriter<Row>(format, streamSink(ctx.stdout), {
    columns: names.map((name) => ({ name, get: (row: Row) => row[name] as string | number })),
    toJson: (row) => row,
    escapeFormulas: true,
  });
  await writer.writeRows(rows);
  await writer.finish();
}

/** `state list`: the jobs of --state DIR, or of the team store (--state pg, or no --state). */
export async function listJobs(ctx: RunContext, flags: StateFlags): Promise<number> {
  const local = flags.state !== undefined && !flags.state.startsWith('pg');
  const jobs: JobSummary[] = local
    ? [await showLocalJob(flags.state!)].map(summaryOf)
    : await (await requireTeamStore(ctx, flags.state ?? 'pg')).jobs.list();
  await writeRows(ctx, flags, SUMMARY_COLUMNS, jobs);
  if (jobs.length === 0) ctx.stderr.write('The team store has no jobs yet.\n');
  return ExitCode.ok;
}

function summaryOf(detail: JobDetail): JobSummary {
  const { progress: _progress, runs: _runs, ...summary } = detail;
  return summary;
}

async function detailOf(ctx: RunContext, job: string): Promise<JobDetail> {
  const name = remoteJobName(job);
  if (name === undefined) return showLocalJob(job);
  const detail = await (await requireTeamStore(ctx, job)).jobs.show(name);
  if (detail === undefined) throw new CliError(`no job ${job} in the team store.`, ExitCode.unanswerable);
  return detail;
}

/** `state show JOB`: its summary, the unfinished run's progress and its last runs, as field/value rows. */
export async function showJob(ctx: RunContext, job: string, flags: StateFlags): Promise<number> {
  const detail = await detailOf(ctx, job);
  const { progress, runs, ...summary } = detail;
  const rows: { field: string; value: string | number }[] = Object.entries(summary).map(([field, value]) => ({
    field,
    value: value as string | number,
  }));
  for (const [field, value] of Object.entries(progress ?? {})) rows.push({ field: `unfinished_${field}`, value });
  for (const run of runs)
    rows.push({ field: `run ${run.run_id}`, value: `${run.finished_at} ${run.rows} rows ${run.output}`.trim() });
  await writeRows(ctx, flags, ['field', 'value'], rows);
  return ExitCode.ok;
}

/** `state reset JOB`: the unfinished run discarded; with --forget-exports, its exports too (asked first). */
export async function resetJob(ctx: RunContext, job: string, flags: StateFlags): Promise<number> {
  const name = remoteJobName(job);
  if (flags.forgetExports === true) await confirmForget(ctx, job, flags.yes === true);
  const reset: JobReset =
    name === undefined
      ? await resetLocalJob(job, flags.forgetExports === true)
      : await (await requireTeamStore(ctx, job)).jobs.reset(name, flags.forgetExports === true);
  const discarded =
    reset.discarded_run === undefined
      ? 'no unfinished run to discard'
      : `discarded unfinished run ${reset.discarded_run}`;
  const forgot =
    flags.forgetExports === true
      ? `; forgot ${reset.forgotten_exports} exported leads (--only-new hands them out again)`
      : '';
  ctx.stderr.write(`${reset.job}: ${discarded}${forgot}. The next run starts fresh.\n`);
  // What was discarded is also data, for a script: one row.
  const row = { ...reset, discarded_run: reset.discarded_run ?? '' };
  await writeRows(ctx, flags, ['job', 'discarded_run', 'forgotten_exports'], [row]);
  return ExitCode.ok;
}

/** Forgetting exports cannot be undone: a person is asked; off a terminal --yes is needed (exit 2). */
async function confirmForget(ctx: RunContext, job: string, yes: boolean): Promise<void> {
  if (yes) return;
  if (!ctx.stdin.isTTY || !ctx.stderr.isTTY)
    throw new UsageError(
      `--forget-exports makes --only-new hand out again every lead ${job} exported, and off a terminal prospect ` +
        'cannot ask first.',
      'Add --yes to agree.',
    );
  const prompt = createInterface({ input: ctx.stdin, output: ctx.stderr });
  try {
    const answer = await prompt.question(
      `Forget every lead ${job} exported, so --only-new hands them out again? [y/N] `,
      {
        signal: ctx.signal,
      },
    );
    if (!/^y(es)?$/i.test(answer.trim()))
      throw new UsageError('not reset: the question was answered no; nothing changed.');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new CancelledError('cancelled; nothing was reset.');
  } finally {
    prompt.close();
  }
}
