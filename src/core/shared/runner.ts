import type { Writable } from 'node:stream';
import { readFile, stat } from 'node:fs/promises';
import { ExitCode, exitCodeOf, knownFailure } from '../../exit-codes.js';
import { isBrokenPipe, jobHandlesBrokenPipe } from '../../io/broken-pipe.js';
import type { Column } from '../../io/columns.js';
import { checkOutputPath, openOutput, writeNamedFile } from '../../io/output.js';
import { createRowWriter, type OutputFormat, type RowWriter } from '../../io/writers.js';
import { documentMeta, metaJson, runRecord, ROW_COMMANDS, type RowCommand, type RunRecord } from './provenance.js';
import type { RunContext } from '../../runtime/context.js';
import { closingLine, type Written } from '../../ui/closing.js';
import { startProgress, type Progress } from '../../ui/progress.js';
import { jsonSafe } from '../../util/display-safe.js';
import { isRecord } from '../../util/is-record.js';
import { outputTarget } from '../../io/output-target.js';

/**
 * The machine-readable record of a run (`--summary FILE`): cron users read it instead of parsing
 * logs. Written on success and on failure, so a failed run still says how far it got. The job
 * fills in what it counts; the runner adds how the run ended.
 */
interface RunSummary {
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
  /**
   * The output that a failed run must discard, so no half-written file is left; `direct` when its
   * rows went out as they were written (stdout, a device), and so cannot be.
   */
  output: { abort(): Promise<void>; readonly direct?: boolean; readonly path?: string | undefined } | undefined;
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
  /**
   * A failure the run ends with once its output is committed: what it could not do, with every row it
   * has kept (a verify endpoint that refused: the rows are written unverified). Exit code: exitCodeOf.
   */
  endsWith?(): Error | undefined;
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
 * with), and the error goes on to the command runner, which reports it. A reader that closed stdout
 * (`| head`, EPIPE) ends the run with exit 0 and a summary that says `stdout_closed`.
 */
export async function runJob(ctx: RunContext, job: Job): Promise<number> {
  const progress = await startProgress(ctx.reporter, ctx.stderr, job.progress, ctx.env);
  const brokenPipeHandled = jobHandlesBrokenPipe();
  try {
    await job.work(progress);
  } catch (error) {
    progress.stop();
    // `| head` took what it wanted: a success that says so, as a pipeline's writer exits 0.
    if (isBrokenPipe(error)) {
      await job.output?.abort();
      await writeSummary(ctx, job, ExitCode.ok, undefined, { stdout_closed: true });
      return ExitCode.ok;
    }
    await job.onFailure?.(error);
    if (await job.writeEmptyResult?.(error)) {
      await writeSummary(ctx, job, ExitCode.ok, error);
      ctx.reporter.caveat(
        `${error instanceof Error ? error.message : String(error)} Wrote an empty result (--allow-empty).`,
      );
      return ExitCode.ok;
    }
    await job.output?.abort();
    const exitCode = exitCodeOf(error, ctx.signal);
    markIncomplete(ctx, job);
    await writeSummary(ctx, job, exitCode, error);
    throw error;
  } finally {
    brokenPipeHandled();
    job.close?.();
  }
  progress.stop();
  const failure = job.endsWith?.();
  await writeSummary(ctx, job, failure ? exitCodeOf(failure, ctx.signal) : ExitCode.ok, failure);
  ctx.reporter.info(closingLine(job.written(), Boolean(ctx.stdout.isTTY), Date.now() - job.startedAt));
  job.report();
  if (failure) throw failure;
  return ExitCode.ok;
}

/**
 * A failed run whose rows went straight out (stdout that is a file or a pipe, a device) leaves them
 * there: the run says so last (src/cli.ts), with the rows written. A terminal showed them already.
 */
function markIncomplete(ctx: RunContext, job: Job): void {
  const output = job.output;
  if (!output?.direct || (output.path === undefined && ctx.stdout.isTTY)) return;
  const { rows, noun } = job.written();
  // No row went out: there is no cut list to warn of, and the failure's own two lines say it all.
  if (rows === 0) return;
  ctx.incompleteOutput = { rows, noun: rows === 1 ? noun[0] : noun[1], where: output.path ?? 'stdout' };
}

/** -o FILE (with its FILE.meta.json) and --summary FILE can be written: checked before any call. */
export async function checkRunFiles(options: { output?: string; summary?: string }): Promise<void> {
  await checkOutputPath(options.output, { sidecar: '.meta.json' });
  await checkOutputPath(options.summary);
}

/** Where and how a row job writes: -o FILE or stdout, in the planned format and columns. */
export interface RowFile<Row> {
  path: string | undefined;
  format: OutputFormat;
  columns: ReadonlyArray<Column<Row>>;
  escapeFormulas: boolean;
  bom: boolean;
}

/** The row file of a command's output flags (-o, --no-escape-formulas, --bom). */
export function rowFile<Row>(
  options: { output?: string | undefined; escapeFormulas: boolean; bom: boolean },
  format: OutputFormat,
  columns: ReadonlyArray<Column<Row>>,
): RowFile<Row> {
  return { path: options.output, format, columns, escapeFormulas: options.escapeFormulas, bom: options.bom };
}

/** A job that writes rows, with FILE.meta.json beside -o FILE: runRowJob opens, ends and commits its output. */
export interface RowJob<Row> extends Omit<Job, 'output' | 'summary' | 'work' | 'writeEmptyResult' | 'report'> {
  file: RowFile<Row>;
  summary: { path: string | undefined; record(): RunRecord };
  /** Writes the rows; resolves to the meta a JSON document ends with. */
  work(writer: RowWriter<Row>, progress: Progress): Promise<unknown>;
  /**
   * --allow-empty: for the failure "nothing matched" that the user allowed, what the empty document
   * ends with, and whether FILE.meta.json is written; undefined when the failure stands.
   */
  emptyResult?(error: unknown): { meta: unknown; sidecar: boolean } | undefined;
  /** Once the output is in place (committed): what must not happen before (a snapshot replacing the last one). */
  committed?(): Promise<unknown> | undefined;
  /** The summary lines after a success; `sidecar` is where FILE.meta.json went, if anywhere. */
  report(sidecar: string | undefined): void;
}

/** runJob for a job that writes rows: the document's end, its sidecar and the commit are the same for every one. */
export async function runRowJob<Row>(ctx: RunContext, job: RowJob<Row>): Promise<number> {
  const { file } = job;
  const output = await openOutput(file.path, ctx.stdout);
  const writer = await createRowWriter<Row>(file.format, output.sink, {
    columns: file.columns,
    toJson: (row) => row,
    escapeFormulas: file.escapeFormulas,
    bom: file.bom,
  });
  const finish = async (meta: unknown, sidecar: boolean) => {
    await writer.finish(documentMeta(file.format, meta, job.summary.record));
    if (sidecar) await output.writeSidecar('.meta.json', metaJson(job.summary.record()));
    await output.commit();
    await job.committed?.();
  };
  return runJob(ctx, {
    ...job,
    output,
    work: async (progress) => finish(await job.work(writer, progress), true),
    async writeEmptyResult(error) {
      const empty = job.emptyResult?.(error);
      if (empty === undefined) return false;
      await finish(empty.meta, empty.sidecar);
      return true;
    },
    report: () => job.report(output.sidecarPath('.meta.json')),
  });
}

/**
 * The runs whose --summary runJob wrote, with the job's counts. A run that fails before its job
 * starts (a bad flag, a missing input or folder, the lock) gets the short record of
 * writeEarlySummary instead, so no failure leaves the previous run's `"exit_code": 0` in place.
 */
const summarized = new WeakSet<RunContext>();

async function writeSummary(
  ctx: RunContext,
  job: Job,
  exitCode: number,
  error?: unknown,
  extra: Record<string, unknown> = {},
): Promise<void> {
  if (job.summary?.path === undefined) return;
  const previous = exitCode === ExitCode.ok ? {} : await lastSuccess(job.summary.path);
  await writeNamedFile(
    job.summary.path,
    summaryText({ ...job.summary.record(), ...extra, ...previous }, job.startedAt, exitCode, error),
    ctx.stdout,
  );
  summarized.add(ctx);
}

/** A summary bigger than this is not one prospect wrote: no last_success is read from it. */
const MAX_SUMMARY_BYTES = 4 * 1024 * 1024;

/**
 * The rule for --summary FILE (issue 43): it is always the last run's record, so a monitor never
 * reads last week's success after a failure; a failed run carries the last successful record it
 * replaces as `last_success`, so a failure never loses it. Read only from a regular file.
 */
async function lastSuccess(path: string): Promise<{ last_success?: unknown }> {
  const target = outputTarget(path);
  if (target.kind !== 'file') return {};
  try {
    const file = await stat(target.path);
    if (!file.isFile() || file.size > MAX_SUMMARY_BYTES) return {};
    const earlier: unknown = JSON.parse(await readFile(target.path, 'utf8'));
    if (!isRecord(earlier)) return {};
    if (earlier['exit_code'] === ExitCode.ok) return { last_success: withoutLastSuccess(earlier) };
    return isRecord(earlier['last_success']) ? { last_success: earlier['last_success'] } : {};
  } catch {
    return {};
  }
}

function withoutLastSuccess(record: Record<string, unknown>): Record<string, unknown> {
  const { last_success: _, ...rest } = record;
  return rest;
}

/** The record, with how the run ended; a run that matched nobody (exit 3) says why, whichever command it was. */
function summaryText(record: RunSummary, startedAt: number, exitCode: number, error: unknown): string {
  const message = error === undefined ? undefined : error instanceof Error ? error.message : String(error);
  const noMatch = knownFailure(error)?.exitCode === ExitCode.unanswerable ? message : undefined;
  const ended = {
    ...record,
    ...(noMatch !== undefined && record['no_match_reason'] == null ? { no_match_reason: noMatch } : {}),
    finished_at: new Date().toISOString(),
    duration_ms: Date.now() - startedAt,
    exit_code: exitCode,
    // Every row there was, written: not a failed run, nor one whose reader closed stdout (| head).
    complete: exitCode === ExitCode.ok && record['stdout_closed'] !== true,
    error: exitCode === ExitCode.ok ? undefined : message,
  };
  return `${jsonSafe(JSON.stringify(ended, null, 2))}\n`;
}

/**
 * `--summary FILE` as the command line asks for it: the row command and the path (the last one
 * given, as commander takes it).
 */
function requestedSummary(args: readonly string[]): { command: RowCommand; path: string } | undefined {
  const end = args.indexOf('--');
  const words = end === -1 ? args : args.slice(0, end);
  const command = words.find((word): word is RowCommand => (ROW_COMMANDS as readonly string[]).includes(word));
  let path: string | undefined;
  words.forEach((word, index) => {
    if (word === '--summary') path = words[index + 1];
    else if (word.startsWith('--summary=')) path = word.slice('--summary='.length);
  });
  return command === undefined || path === undefined ? undefined : { command, path };
}

/**
 * A run that failed before its job could write its --summary (or without a job at all: commander
 * refused a flag): the record with nothing counted, its exit code and the error. Best effort: a
 * summary that cannot be written (its folder is the missing one) must not hide the first error.
 */
export async function writeEarlySummary(
  args: readonly string[],
  run: { startedAt: number; exitCode: number; error: unknown; stdout: Writable; ctx?: RunContext },
): Promise<void> {
  if (run.ctx !== undefined && summarized.has(run.ctx)) return;
  const requested = requestedSummary(args);
  if (requested === undefined) return;
  const record = runRecord({
    command: requested.command,
    parameters: {},
    startedAt: run.startedAt,
    output: undefined,
    rows: 0,
  });
  const previous = run.exitCode === ExitCode.ok ? {} : await lastSuccess(requested.path);
  await writeNamedFile(
    requested.path,
    summaryText({ ...record, ...previous }, run.startedAt, run.exitCode, run.error),
    run.stdout,
  ).catch(() => {});
}
