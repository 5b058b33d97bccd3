/**
 * Issue 43 point 6: a new job with --only-new on a team store whose leads another job exported writes
 * nothing, and says why on stderr, once: the count and the job (its run and when it finished). The runs
 * are main() in process against a real PostgreSQL; the count is the first job's output, read as CSV here.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess, scratchDir } from '../../../helpers/cli.js';
import { csvRecords } from '../../../helpers/csv.js';
import { POSTGRES, testDatabase, TEST_TEAM_KEY } from '../../../helpers/postgres.js';
import { SANDBOX_KEYS, startTestSandbox, type TestSandbox } from '../../../helpers/sandbox.js';

let sandbox: TestSandbox;
beforeAll(async () => {
  if (!POSTGRES.skip) sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

describe.skipIf(POSTGRES.skip)('--only-new on a team store that has nothing new', () => {
  it('names the job that had exported the leads, with their count, once on stderr; exit 0', async () => {
    const db = await testDatabase('onlynewwhy');
    const home = await scratchDir('home-onlynew-');
    const options = {
      url: sandbox.url,
      apiKey: SANDBOX_KEYS.growth,
      cwd: home,
      timeoutMs: 120_000,
      env: { HOME: home, PROSPECT_STATE_URL: db.url, PROSPECT_TEAM_KEY: TEST_TEAM_KEY },
    };
    const base = ['pipeline', '-t', 'jQuery', '--country', 'us', '--seniority', 'cxo', '--max', '40', '--only-new'];
    const adhoc = await runInProcess([...base, '--state', 'pg:adhoc', '-o', 'adhoc.csv'], options);
    expect(adhoc.code, adhoc.stderr).toBe(0);
    const exported = csvRecords(await readFile(join(home, 'adhoc.csv'), 'utf8')).length;
    expect(exported).toBeGreaterThan(0);
    const { rows } = await db.sql("SELECT run_id, finished_at FROM prospect.runs WHERE job = 'adhoc'");
    expect(rows).toHaveLength(1);

    const weekly = await runInProcess([...base, '--state', 'pg:weekly', '-o', 'weekly.csv'], options);
    expect(weekly.code, weekly.stderr).toBe(0);
    expect(csvRecords(await readFile(join(home, 'weekly.csv'), 'utf8'))).toEqual([]);
    const line =
      `No new leads: all ${exported} leads found had already been exported, ${exported} by job pg:adhoc ` +
      `(run ${rows[0].run_id}, ${(rows[0].finished_at as Date).toISOString()}); wrote a header-only result.`;
    expect(weekly.stderr).toContain(line);
    expect(weekly.stderr.split(line)).toHaveLength(2);
  }, 120_000);
});
