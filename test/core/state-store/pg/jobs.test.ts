/**
 * `prospect state` on jobs of the team store, against a real PostgreSQL, through the command's run
 * functions: a held job with a committed page and another with a recorded run are listed and shown
 * as the tables hold them; a reset of the held one is exit 6 and changes nothing; once its holder lets
 * go, a reset gives back its reserved leads and pages, and --forget-exports forgets only that job's.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseStateUrl } from '../../../../src/config/state-url.js';
import { listJobs, resetJob, showJob } from '../../../../src/core/pipeline/state/state-job.js';
import { leadKey } from '../../../../src/core/state-store/lead-key.js';
import { openPgStore } from '../../../../src/core/state-store/pg/store.js';
import { csvRecords } from '../../../helpers/csv.js';
import { jobContext } from '../../../helpers/job-context.js';
import { POSTGRES, TEST_TEAM_KEY, testDatabase, type TestDatabase } from '../../../helpers/postgres.js';
import { scratchDir } from '../../../helpers/scratch.js';

const lead = (email: string) => ({ domain: 'example.com', business_email: email, full_name: null, title: null });
const HELD = [lead('ana@example.com'), lead('bob@example.com'), lead('cy@example.com')];
const DONE = [lead('dee@example.com'), lead('eve@example.com')];

async function state(db: TestDatabase, action: 'list' | 'show' | 'reset', target: string, flags = {}) {
  const job = jobContext();
  job.ctx.env = {
    PROSPECT_STATE_URL: db.url,
    PROSPECT_TEAM_KEY: TEST_TEAM_KEY,
    PROSPECT_CONFIG_DIR: join(await scratchDir(), 'config'),
  };
  const run =
    action === 'list'
      ? listJobs(job.ctx, { format: 'csv', ...flags })
      : action === 'show'
        ? showJob(job.ctx, target, { format: 'csv', ...flags })
        : resetJob(job.ctx, target, flags);
  let refusal = '';
  const code = await job.exitCodeOf(
    run.catch((error: unknown) => {
      refusal = (error as Error).message;
      throw error;
    }),
  );
  const rows = code === 0 && action !== 'reset' ? csvRecords(job.stdout()) : [];
  return { code, rows, stderr: job.stderr() + refusal };
}

const count = async (db: TestDatabase, sql: string, job: string) =>
  (await db.sql(`SELECT count(*)::int AS n FROM ${sql}`, [job])).rows[0].n as number;

describe.skipIf(POSTGRES.skip)('prospect state on the team store', () => {
  it('lists, shows and resets pg jobs; exit 6 while held; never touches another job', async () => {
    const db = await testDatabase('statecmd');
    const url = parseStateUrl(db.url);
    const [a, b] = [await openPgStore(url, 'host-a', TEST_TEAM_KEY), await openPgStore(url, 'host-b', TEST_TEAM_KEY)];
    const dir = await scratchDir();
    const files = {
      checkpointPath: join(dir, 'checkpoint.json'),
      outputPath: join(dir, 'output'),
      rowsPath: join(dir, 'rows'),
      keysPath: join(dir, 'keys'),
      publishingPath: join(dir, 'publishing.json'),
    };
    const output = HELD.map((row) => `${row.business_email}\n`).join('');
    const keys = HELD.map((row) => `${leadKey(row)}\n`).join('');
    await writeFile(files.outputPath, output);
    await writeFile(files.keysPath, keys);
    const held = a.job('held');
    const release = await held.lock('pipeline', files);
    const checkpoint = { run_id: 'run-held', output_bytes: output.length, keys_bytes: keys.length, spooled: false };
    await held.commitPage(files, checkpoint, JSON.stringify(checkpoint));

    const done = b.job('done');
    done.beginRun('run-done');
    expect(await done.leads.newOnly(DONE)).toEqual(DONE);
    const record = { run_id: 'run-done', finished_at: '2026-11-01T10:00:00.000Z', rows: DONE.length };
    const batches = (async function* () {
      yield DONE.map((row) => Buffer.from(leadKey(row), 'hex'));
    })();
    await done.leads.recordRun(record, batches);

    const listed = await state(db, 'list', '');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.rows).toEqual([
      {
        job: 'pg:done',
        held_by: '',
        last_finished_at: '2026-11-01T10:00:00.000Z',
        last_rows: '2',
        unfinished_run: '',
        exported: '2',
      },
      {
        job: 'pg:held',
        held_by: `host-a pid ${process.pid}`,
        last_finished_at: '',
        last_rows: '',
        unfinished_run: 'run-held',
        exported: '3',
      },
    ]);
    const shown = await state(db, 'show', 'pg:done');
    expect(shown.rows.map((row) => row.field)).toContain('run run-done');
    expect((await state(db, 'show', 'pg:nobody')).code).toBe(3);

    const refused = await state(db, 'reset', 'pg:held', { forgetExports: true, yes: true });
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain('host-a');
    expect(await count(db, 'prospect.job_chunks WHERE job = $1', 'held')).toBe(2);
    expect(await count(db, 'prospect.exported WHERE job = $1', 'held')).toBe(3);

    await release();
    const reset = await state(db, 'reset', 'pg:held');
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stderr).toContain('discarded unfinished run run-held');
    expect(await count(db, 'prospect.job_chunks WHERE job = $1', 'held')).toBe(0);
    expect(await count(db, 'prospect.exported WHERE job = $1', 'held')).toBe(0);
    expect(await count(db, 'prospect.jobs WHERE checkpoint IS NOT NULL AND name = $1', 'held')).toBe(0);
    expect(await count(db, 'prospect.exported WHERE job = $1', 'done')).toBe(2);

    const forgot = await state(db, 'reset', 'pg:done', { forgetExports: true, yes: true });
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(forgot.stderr).toContain('forgot 2 exported leads');
    expect(await count(db, 'prospect.exported WHERE job = $1', 'done')).toBe(0);
    expect(await count(db, 'prospect.runs WHERE job = $1', 'done')).toBe(1);
    const other = b.job('other');
    other.beginRun('run-other');
    expect(await other.leads.newOnly(DONE)).toEqual(DONE);
    await Promise.all([a.close(), b.close()]);
  });
});
