/**
 * The team store's jobs for `prospect state`: listed and shown from the jobs, runs and exported
 * tables; reset under the job's own advisory lock, so a held job is refused (exit 6) and a run cannot
 * start while its unfinished run is being discarded. Only the named job's rows are touched.
 */
import { progressOf, SHOWN_RUNS, type JobRun, type JobReset, type JobSummary, type TeamJobs } from '../jobs.js';
import { JOB_LOCK_CLASS, PgJobState } from './job.js';
import { SCHEMA } from './schema.js';
import type { PgSession } from './session.js';
import type { TeamKeys } from './team-key.js';

interface JobRow {
  name: string;
  holder_host: string | null;
  holder_pid: number | null;
  checkpoint: { run_id?: string } | null;
  finished_at: Date | null;
  rows: number | null;
  exported: number;
}

export function teamJobs(session: PgSession, host: string, keys: TeamKeys): TeamJobs {
  const summaries = async (name?: string): Promise<JobSummary[]> => {
    const { rows } = await session.query(
      `WITH names AS (SELECT name FROM ${SCHEMA}.jobs UNION SELECT job FROM ${SCHEMA}.runs
                      UNION SELECT DISTINCT job FROM ${SCHEMA}.exported)
       SELECT n.name, j.holder_host, j.holder_pid, j.checkpoint, last.finished_at, (last.record->>'rows')::int AS rows,
              (SELECT count(*)::int FROM ${SCHEMA}.exported e WHERE e.job = n.name) AS exported
         FROM names n LEFT JOIN ${SCHEMA}.jobs j ON j.name = n.name
         LEFT JOIN LATERAL (SELECT finished_at, record FROM ${SCHEMA}.runs r WHERE r.job = n.name
                            ORDER BY finished_at DESC LIMIT 1) last ON true
        WHERE $1::text IS NULL OR n.name = $1 ORDER BY n.name`,
      [name ?? null],
    );
    const result: JobSummary[] = [];
    for (const row of rows as JobRow[]) {
      const held = await isHeld(session, row.name);
      result.push({
        job: `pg:${row.name}`,
        held_by: held ? `${row.holder_host ?? '?'} pid ${row.holder_pid ?? '?'}` : '',
        last_finished_at: row.finished_at === null ? '' : new Date(row.finished_at).toISOString(),
        last_rows: row.rows ?? '',
        unfinished_run: row.checkpoint?.run_id ?? '',
        exported: row.exported,
      });
    }
    return result;
  };
  return {
    list: () => summaries(),
    async show(name) {
      const [summary] = await summaries(name);
      if (summary === undefined) return undefined;
      const { rows } = await session.query(`SELECT j.checkpoint FROM ${SCHEMA}.jobs j WHERE j.name = $1`, [name]);
      const runs = await session.query(
        `SELECT run_id, finished_at, record FROM ${SCHEMA}.runs WHERE job = $1 ORDER BY finished_at DESC LIMIT $2`,
        [name, SHOWN_RUNS],
      );
      return {
        ...summary,
        progress: progressOf(rows[0]?.checkpoint),
        runs: (
          runs.rows as { run_id: string; finished_at: Date; record: { rows: number; output?: string | null } }[]
        ).map((run): JobRun => ({
          run_id: run.run_id,
          finished_at: new Date(run.finished_at).toISOString(),
          rows: run.record.rows,
          output: run.record.output ?? '',
        })),
      };
    },
    reset: (name, forgetExports) => resetJob(session, new PgJobState(session, name, host, keys), name, forgetExports),
  };
}

/**
 * Whether a session holds the job's lock, read from pg_locks rather than by taking it: a run starting
 * at that moment must not find it held by a listing. A two-key advisory lock shows as classid = the
 * first key, objid = the second (as an unsigned 32-bit oid), objsubid = 2.
 */
async function isHeld(session: PgSession, name: string): Promise<boolean> {
  const { rows } = await session.query(
    `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
       AND classid = $1::bigint::oid AND objid = (pg_catalog.hashtext($2)::bigint & 4294967295)::oid) AS held`,
    [JOB_LOCK_CLASS, name],
  );
  return rows[0]?.held === true;
}

/** Discards the unfinished run as a dropped run is (PgJobState.discard), and with forgetExports the job's exports. */
async function resetJob(session: PgSession, job: PgJobState, name: string, forgetExports: boolean): Promise<JobReset> {
  const { rows: taken } = await session.query(
    'SELECT pg_catalog.pg_try_advisory_lock($1, pg_catalog.hashtext($2)) AS taken',
    [JOB_LOCK_CLASS, name],
  );
  if (taken[0]?.taken !== true) throw await job.heldBy();
  try {
    const { rows } = await session.query(`SELECT checkpoint FROM ${SCHEMA}.jobs WHERE name = $1`, [name]);
    const runId = (rows[0]?.checkpoint as { run_id?: string } | null | undefined)?.run_id;
    if (runId !== undefined) job.beginRun(runId);
    await job.discard();
    let forgotten = 0;
    if (forgetExports) {
      const { rowCount } = await session.query(`DELETE FROM ${SCHEMA}.exported WHERE job = $1`, [name]);
      forgotten = rowCount ?? 0;
    }
    return { job: `pg:${name}`, discarded_run: runId, forgotten_exports: forgotten };
  } finally {
    await session
      .query('SELECT pg_catalog.pg_advisory_unlock($1, pg_catalog.hashtext($2))', [JOB_LOCK_CLASS, name])
      .catch(() => {});
  }
}
