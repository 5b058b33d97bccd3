/**
 * `prospect state` on a local --state directory: the job it holds, listed, shown and reset. A reset
 * takes the directory's lock (exit 6 while a run holds it), discards current/ as a dropped run does,
 * and with --forget-exports removes the exports ledger; runs.ndjson, the history, stays.
 */
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../../../exit-codes.js';
import { progressOf, SHOWN_RUNS, type JobDetail, type JobReset, type JobRun } from '../../state-store/jobs.js';
import { stateLockHolder, takeStateLock } from '../../state-store/lock.js';
import { runRecordSchema } from '../../state-store/run-record.js';
import { LocalExportsLedger } from './exports-ledger.js';
import { StateDirectory } from './state-directory.js';

/** An existing --state directory; a missing one is exit 2 (reading must not create it). */
function existing(dir: string): StateDirectory {
  if (!existsSync(dir))
    throw new UsageError(`--state ${dir}: no such directory.`, 'Name the directory a pipeline run used with --state.');
  return StateDirectory.forReading(dir);
}

async function exportedCount(state: StateDirectory): Promise<number> {
  const ledger = await LocalExportsLedger.openIfAny(state);
  try {
    return ledger?.exportedCount() ?? 0;
  } finally {
    ledger?.close();
  }
}

/** The successful runs of runs.ndjson, newest first (a damaged line is left out: this only reads). */
async function runsOf(state: StateDirectory): Promise<JobRun[]> {
  const text = await readFile(state.runsPath, 'utf8').catch(() => '');
  const runs: JobRun[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const parsed = runRecordSchema.safeParse(parseOrUndefined(line));
    if (!parsed.success) continue;
    const { run_id: runId, finished_at: finishedAt, rows, output } = parsed.data;
    runs.push({ run_id: runId, finished_at: finishedAt, rows, output: output ?? '' });
  }
  return runs.reverse();
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

async function checkpointOf(state: StateDirectory): Promise<Record<string, unknown> | undefined> {
  const text = await readFile(state.checkpointPath, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { run_id: '(damaged checkpoint)' };
  }
}

export async function showLocalJob(dir: string): Promise<JobDetail> {
  const state = existing(dir);
  const [holder, checkpoint, runs, exported] = await Promise.all([
    stateLockHolder(dir),
    checkpointOf(state),
    runsOf(state),
    exportedCount(state),
  ]);
  const last = runs[0];
  return {
    job: dir,
    held_by: holder === undefined ? '' : `${holder.host} pid ${holder.pid}`,
    last_finished_at: last?.finished_at ?? '',
    last_rows: last?.rows ?? '',
    unfinished_run: typeof checkpoint?.run_id === 'string' ? checkpoint.run_id : '',
    exported,
    progress: progressOf(checkpoint),
    runs: runs.slice(0, SHOWN_RUNS),
  };
}

export async function resetLocalJob(dir: string, forgetExports: boolean): Promise<JobReset> {
  const state = existing(dir);
  const release = await takeStateLock(join(dir, 'lock'), dir, 'state reset');
  try {
    const checkpoint = await checkpointOf(state);
    const discarded = typeof checkpoint?.run_id === 'string' ? checkpoint.run_id : undefined;
    await state.discardCurrent();
    let forgotten = 0;
    if (forgetExports) {
      forgotten = await exportedCount(state);
      for (const suffix of ['', '-wal', '-shm', '-journal'])
        await rm(`${state.exportsLedgerPath}${suffix}`, { force: true });
    }
    return { job: dir, discarded_run: discarded, forgotten_exports: forgotten };
  } finally {
    await release();
  }
}
