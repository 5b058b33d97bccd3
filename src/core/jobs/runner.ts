import { ExitCode, exitCodeOf } from '../../exit-codes.js';
import { writeFileAtomic } from '../../io/atomic-file.js';
import type { RunContext } from '../../runtime/context.js';
import { closingLine, type Written } from '../../ui/closing.js';
import { startProgress, type Progress } from '../../ui/progress.js';

/**
 * The machine-readable record of a run (`--summary FILE`): cron users read it instead of parsing
 * logs. Written on success and on failure, so a failed run still says how far it got. The job
 * fills in what it counts; the runner adds how the run ended.
 */
export interface RunSummary {
  command: string;
  parameters: Record<string, unknown>;
  started_at: string;
  [field: string]: unknown;
}

/** What a job hands the runner: its work, and the few things only the job knows. */
export interface Job {
  /** When the run started (Date.now()); the summary's clock and the progress rate's. */
  startedAt: number;
  /** The progress line's first words: "Fetching companies". */
  progress: string;
  /** The output that a failed run must discard, so no half-written file is left. */
  output: { abort(): Promise<void> } | undefined;
  /** `--summary FILE` and the job's counts at the moment the run ends. */
  summary?: { path: string | undefined; record(): RunSummary };
  /** The work, to the committed output. */
  work(progress: Progress): Promise<void>;
  /** What a failure means to this job's own files (a checkpoint to keep or to drop), before anything else. */
  onFailure?(error: unknown): Promise<void> | void;
  /**
   * --allow-empty: when this failure is "nothing matched" and the user allowed an empty result,
   * writes one and resolves to true; the run then succeeds.
   */
  writeEmptyResult?(error: unknown): Promise<boolean>;
  /** Runs once the work has ended, either way (closes caches). */
  close?(): void;
  /** What the run wrote and where: the first line of its summary ("Wrote 120 companies to a.csv in 2.1s."). */
  written(): Written;
  /** The summary lines on stderr after a success, below that first line. */
  report(): void;
}

/**
 * Runs a job the same way for every command: progress while it works; on failure the output is
 * discarded, the summary records the exit code that exitCodeOf decides (the same the process exits
 * with), and the error goes on to the command runner, which reports it.
 */
export async function runJob(ctx: RunContext, job: Job): Promise<number> {
  const progress = await startProgress(ctx.reporter, ctx.stderr, job.progress, ctx.env);
  try {
    await job.work(progress);
  } catch (error) {
    progress.stop();
    await job.onFailure?.(error);
    if (await job.writeEmptyResult?.(error)) {
      await writeSummary(job, ExitCode.ok, undefined, messageOf(error));
      ctx.reporter.caveat(`${messageOf(error)} Wrote an empty result (--allow-empty).`);
      return ExitCode.ok;
    }
    await job.output?.abort();
    const exitCode = exitCodeOf(error, ctx.signal);
    await writeSummary(job, exitCode, error, exitCode === ExitCode.unanswerable ? messageOf(error) : undefined);
    throw error;
  } finally {
    job.close?.();
  }
  progress.stop();
  await writeSummary(job, ExitCode.ok);
  ctx.reporter.info(closingLine(job.written(), Boolean(ctx.stdout.isTTY), Date.now() - job.startedAt));
  job.report();
  return ExitCode.ok;
}

/** `noMatchReason`: why nothing matched, when the run ended so (exit 3, or an empty result --allow-empty wrote). */
async function writeSummary(job: Job, exitCode: number, error?: unknown, noMatchReason?: string): Promise<void> {
  if (job.summary?.path === undefined) return;
  const own = job.summary.record();
  const record = {
    ...own,
    ...(noMatchReason === undefined ? {} : { no_match_reason: own['no_match_reason'] ?? noMatchReason }),
    finished_at: new Date().toISOString(),
    duration_ms: Date.now() - job.startedAt,
    exit_code: exitCode,
    error: error === undefined ? undefined : messageOf(error),
  };
  await writeFileAtomic(job.summary.path, `${JSON.stringify(record, null, 2)}\n`);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
