/**
 * `prospect state`: what a store keeps of its pipeline jobs, as people and scripts need to see it,
 * and the reset of one job. The local store's side is in core/pipeline/state/jobs.ts, the team's in
 * ./pg/jobs.ts; both give these shapes.
 */

/** One job, as `prospect state list` writes it. */
export interface JobSummary {
  /** pg:NAME, or the --state directory. */
  job: string;
  /** Who holds the job's lock (host and pid), '' when nobody does. */
  held_by: string;
  /** The last successful run: when it finished and how many rows it wrote ('' when none). */
  last_finished_at: string;
  last_rows: number | '';
  /** The unfinished run a next run would resume ('' when none). */
  unfinished_run: string;
  /** Leads this job exported (what --only-new skips, in the store). */
  exported: number;
}

/** One successful run of a job, newest first in a JobDetail. */
export interface JobRun {
  run_id: string;
  finished_at: string;
  rows: number;
  output: string;
}

/** `prospect state show`: the summary, the unfinished run's progress and the last runs. */
export interface JobDetail extends JobSummary {
  /** Of the unfinished run: pages and rows committed, companies seen (undefined without one). */
  progress: { pages_done: number; rows_written: number; companies_seen: number } | undefined;
  runs: JobRun[];
}

/** What a reset discarded. */
export interface JobReset {
  job: string;
  discarded_run: string | undefined;
  forgotten_exports: number;
}

/** How many runs `show` lists. */
export const SHOWN_RUNS = 10;

/** The progress a checkpoint records, from its JSON (either store's). */
export function progressOf(checkpoint: unknown): JobDetail['progress'] {
  if (typeof checkpoint !== 'object' || checkpoint === null) return undefined;
  const { pages_done: pages, rows_written: rows, counters } = checkpoint as Record<string, unknown>;
  const seen = (counters as { companies_seen?: unknown } | undefined)?.companies_seen;
  const number = (value: unknown) => (typeof value === 'number' ? value : 0);
  return { pages_done: number(pages), rows_written: number(rows), companies_seen: number(seen) };
}

/** The team store's jobs (./pg/jobs.ts). */
export interface TeamJobs {
  list(): Promise<JobSummary[]>;
  show(name: string): Promise<JobDetail | undefined>;
  /** Refused (exit 6) while the job is held. */
  reset(name: string, forgetExports: boolean): Promise<JobReset>;
}
