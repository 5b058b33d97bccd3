/**
 * A job of the team store (src/core/state-store/pg/job.ts) on a real server: a run dropped unfinished
 * gives back the leads it reserved, whichever way it reserved them (an --only-new look-up, or a
 * committed page's keys), so another job can export them; a run whose success was recorded keeps them.
 * Read back as another job's --only-new sees them, and in the exports table itself. A resume on another
 * machine gets the stored pages whole, or refuses (exit 2) when a chunk is missing: never a cut resume.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseStateUrl } from '../../../../src/config/state-url.js';
import { CliError, ExitCode } from '../../../../src/exit-codes.js';
import { leadKey } from '../../../../src/core/state-store/lead-key.js';
import { openPgStore } from '../../../../src/core/state-store/pg/store.js';
import type { LocalRunFiles, TeamStore } from '../../../../src/core/state-store/types.js';
import { POSTGRES, TEST_TEAM_KEY, testDatabase, type TestDatabase } from '../../../helpers/postgres.js';
import { scratchDir } from '../../../helpers/scratch.js';

const lead = (email: string) => ({ domain: 'example.com', business_email: email, full_name: null, title: null });
const ROWS = [lead('ana@example.com'), lead('bob@example.com'), lead('cy@example.com')];

async function twoStores(db: TestDatabase): Promise<[TeamStore, TeamStore]> {
  const url = parseStateUrl(db.url);
  return [await openPgStore(url, 'host-a', TEST_TEAM_KEY), await openPgStore(url, 'host-b', TEST_TEAM_KEY)];
}

/** The unfinished run's local files, holding `rows`' output bytes and their lead keys. */
async function localRun(rows: typeof ROWS): Promise<{ files: LocalRunFiles; output: string; keys: string }> {
  const dir = await scratchDir();
  const files = {
    checkpointPath: join(dir, 'checkpoint.json'),
    outputPath: join(dir, 'output'),
    rowsPath: join(dir, 'rows'),
    keysPath: join(dir, 'keys'),
    publishingPath: join(dir, 'publishing.json'),
  };
  const output = rows.map((row) => `${row.business_email},${row.domain}\n`).join('');
  const keys = rows.map((row) => `${leadKey(row)}\n`).join('');
  await writeFile(files.outputPath, output);
  await writeFile(files.keysPath, keys);
  return { files, output, keys };
}

const exportedCount = async (db: TestDatabase, job: string) =>
  (await db.sql('SELECT count(*)::int AS n FROM prospect.exported WHERE job = $1', [job])).rows[0].n as number;

describe.skipIf(POSTGRES.skip)("a dropped run's lead reservations", () => {
  it('reserved by --only-new: given back by discard(), so another job exports them', async () => {
    const db = await testDatabase('discardnew');
    const [a, b] = await twoStores(db);
    const first = a.job('first');
    const { files } = await localRun([]);
    const release = await first.lock('pipeline', files);
    first.beginRun('run-1');
    expect(await first.leads.newOnly(ROWS)).toEqual(ROWS);
    const second = b.job('second');
    second.beginRun('run-2');
    // Held by the first job's unfinished run: not new to the second.
    expect(await second.leads.newOnly(ROWS)).toEqual([]);
    await first.discard();
    await release();
    expect(await exportedCount(db, 'first')).toBe(0);
    expect(await second.leads.newOnly(ROWS)).toEqual(ROWS);
    await Promise.all([a.close(), b.close()]);
  });

  it("reserved by a committed page's keys: given back by discard(), with the page's bytes", async () => {
    const db = await testDatabase('discardpage');
    const [a, b] = await twoStores(db);
    const first = a.job('first');
    const { files, output, keys } = await localRun(ROWS);
    await first.lock('pipeline', files);
    const checkpoint = { run_id: 'run-1', output_bytes: output.length, keys_bytes: keys.length, spooled: false };
    await first.commitPage(files, checkpoint, JSON.stringify(checkpoint));
    expect(await exportedCount(db, 'first')).toBe(ROWS.length);
    await first.discard();
    expect(await exportedCount(db, 'first')).toBe(0);
    expect((await db.sql('SELECT count(*)::int AS n FROM prospect.job_chunks')).rows[0].n).toBe(0);
    const second = b.job('second');
    second.beginRun('run-2');
    expect(await second.leads.newOnly(ROWS)).toEqual(ROWS);
    await Promise.all([a.close(), b.close()]);
  });

  it('of a run whose success was recorded: kept by discard(), never new again to another job', async () => {
    const db = await testDatabase('discardrecorded');
    const [a, b] = await twoStores(db);
    const first = a.job('first');
    const { files } = await localRun([]);
    await first.lock('pipeline', files);
    first.beginRun('run-1');
    expect(await first.leads.newOnly(ROWS)).toEqual(ROWS);
    const record = { run_id: 'run-1', finished_at: '2026-11-01T10:00:00Z', rows: ROWS.length };
    await first.leads.recordRun(
      record,
      (async function* () {
        yield ROWS.map((row) => Buffer.from(leadKey(row), 'hex'));
      })(),
    );
    await first.discard();
    expect(await exportedCount(db, 'first')).toBe(ROWS.length);
    const second = b.job('second');
    second.beginRun('run-2');
    expect(await second.leads.newOnly(ROWS)).toEqual([]);
    await Promise.all([a.close(), b.close()]);
  });
});

/** Local run files of a machine that resumes: empty, in a directory of their own. */
async function emptyRun(): Promise<LocalRunFiles> {
  return (await localRun([])).files;
}

describe.skipIf(POSTGRES.skip)('a resume reads the unfinished run back whole, or refuses', () => {
  /** Two pages committed on machine A (rows 1, then 2-3), the lock let go: what B resumes. */
  async function twoPagesOnA(name: string) {
    const db = await testDatabase(name);
    const [a, b] = await twoStores(db);
    const job = a.job('first');
    const whole = await localRun(ROWS);
    const page1 = await localRun(ROWS.slice(0, 1));
    const release = await job.lock('pipeline', page1.files);
    const checkpoint = (output: string, keys: string) => ({
      run_id: 'run-1',
      output_bytes: output.length,
      keys_bytes: keys.length,
      spooled: false,
    });
    const first = checkpoint(page1.output, page1.keys);
    await job.commitPage(page1.files, first, JSON.stringify(first));
    // The second page: the whole run's files, of which the first page's bytes are already stored.
    const second = checkpoint(whole.output, whole.keys);
    await job.commitPage(whole.files, second, JSON.stringify(second));
    await release();
    await a.close();
    return { db, b, whole };
  }

  it('every chunk there: the resuming machine gets the bytes and keys of both pages', async () => {
    const { b, whole } = await twoPagesOnA('resumewhole');
    const files = await emptyRun();
    const release = await b.job('first').lock('pipeline', files);
    expect(await readFile(files.outputPath, 'utf8')).toBe(whole.output);
    expect(await readFile(files.keysPath, 'utf8')).toBe(whole.keys);
    expect(JSON.parse(await readFile(files.checkpointPath, 'utf8'))).toMatchObject({
      run_id: 'run-1',
      output_bytes: whole.output.length,
      keys_bytes: whole.keys.length,
    });
    await release();
    await b.close();
  });

  it.for(['output', 'keys'])('a %s chunk missing: exit 2 naming the shortfall, and no file written', async (file) => {
    const { db, b, whole } = await twoPagesOnA(`resumecut${file}`);
    await db.sql(
      `DELETE FROM prospect.job_chunks WHERE file = $1 AND seq = (SELECT min(seq) FROM prospect.job_chunks WHERE file = $1)`,
      [file],
    );
    const files = await emptyRun();
    const refused = await b
      .job('first')
      .lock('pipeline', files)
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(CliError);
    expect((refused as CliError).exitCode).toBe(ExitCode.usage);
    expect((refused as Error).message).toMatch(/^the unfinished run of --state pg:first is incomplete in the database/);
    if (file === 'output')
      expect((refused as Error).message).toContain(
        `(${
          whole.output.length -
          ROWS.slice(0, 1)
            .map((row) => `${row.business_email},${row.domain}\n`)
            .join('').length
        } of ${whole.output.length} bytes)`,
      );
    expect(existsSync(files.checkpointPath)).toBe(false);
    await b.close();
  });
});
