import { existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { finishCli, runCli, runInProcess, scratchDir, startCli } from '../helpers/cli.js';
import { csvRecords } from '../helpers/csv.js';
import { sandboxStats } from '../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, todayUtc, withSandbox, type RunningSandbox } from '../helpers/sandbox.js';
import { SCRIPT, startOnTerminal } from '../helpers/terminal.js';

const KEY = SANDBOX_KEYS.growth;
// A small page size gives the run many checkpoints to die between.
const FILTERS = ['--page-size', '40', 'pipeline', '-t', 'Shopify', '--seniority', 'cxo,vp', '--max-age', '120d'];
const VERIFYING = [...FILTERS, '--stale', 'verify', '--verify-budget', '60'];

/**
 * 5,000 companies: the Shopify set still spans well over the 6 pages of 40 the SIGKILL case needs and
 * yields over 100 leads (both asserted); a larger one only makes every whole-set run walk more pages.
 */
const COMPANIES = 5_000;
let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ seed: 5, companies: COMPANIES, asOf: todayUtc(), latencyMs: 15 });
});
afterAll(async () => {
  await sandbox?.close();
});

const units = async () => (await sandboxStats(sandbox.url)).units.growth as number;
const options = (extra: Parameters<typeof runCli>[1] = {}) => ({
  url: sandbox.url,
  apiKey: KEY,
  timeoutMs: 120_000,
  ...extra,
});

async function waitForCheckpoint(
  stateDir: string,
  minimumPages: number,
  child: ReturnType<typeof startCli>,
): Promise<void> {
  const path = join(stateDir, 'current', 'checkpoint.json');
  for (let waited = 0; waited < 60_000; waited += 20) {
    if (child.exitCode !== null) return;
    const text = await readFile(path, 'utf8').catch(() => '');
    if (text && JSON.parse(text).pages_done >= minimumPages) return;
    await sleep(20);
  }
}

/** Starts a run, lets it commit `pages` pages, then kills it with SIGKILL: a crash, not a shutdown. */
async function killAfterCheckpoint(
  args: string[],
  state: string,
  pages: number,
  extra: Parameters<typeof runCli>[1] = {},
) {
  const child = startCli(args, options(extra));
  const finished = finishCli(child, options({ cwd: extra.cwd }));
  await waitForCheckpoint(state, pages, child);
  child.kill('SIGKILL');
  return finished;
}

describe('prospect pipeline', () => {
  it('stops at --max, and asks the service for no more companies than it lists', async () => {
    const before = await sandboxStats(sandbox.url);
    const args = ['pipeline', '-t', 'jQuery', '--seniority', 'cxo', '--max', '7', '--format', 'ndjson'];
    // In process: the calls are the sandbox's to count (the tests below spawn pipelines).
    const run = await runInProcess(args, options());
    expect(run.code).toBe(0);
    const domains = new Set(
      run.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line).domain),
    );
    expect(domains.size).toBeGreaterThan(0);
    expect(domains.size).toBeLessThanOrEqual(7);
    const after = await sandboxStats(sandbox.url);
    expect(after.requests.companies - before.requests.companies).toBe(1);
    expect(after.rows.companies - before.rows.companies).toBe(7);
  });

  it('resumes after SIGKILL at several points with byte-identical output and no unit paid twice', async () => {
    const cacheA = await scratchDir();
    const reference = await scratchDir();
    const before = await units();
    // The uninterrupted reference in process; the runs killed and the resume are spawned.
    const clean = await runInProcess(
      [...VERIFYING, '--state', join(reference, 'state'), '-o', join(reference, 'leads.csv')],
      options({ cwd: reference, env: { PROSPECT_CACHE_DIR: cacheA } }),
    );
    expect(clean.code).toBe(0);
    const cleanUnits = (await units()) - before;
    expect(cleanUnits).toBe(60);
    const expected = await readFile(join(reference, 'leads.csv'), 'utf8');
    expect(csvRecords(expected).length).toBeGreaterThan(100);

    const work = await scratchDir();
    const state = join(work, 'state');
    const target = join(work, 'leads.csv');
    const args = [...VERIFYING, '--state', state, '-o', target];
    const env = { PROSPECT_CACHE_DIR: await scratchDir() };
    const start = await units();
    for (const pages of [1, 3, 6]) {
      expect((await killAfterCheckpoint(args, state, pages, { cwd: work, env })).signal).toBe('SIGKILL');
      expect(existsSync(target)).toBe(false);
      expect(
        JSON.parse(await readFile(join(state, 'current', 'checkpoint.json'), 'utf8')).pages_done,
      ).toBeGreaterThanOrEqual(pages);
    }
    const resumed = await runCli(['--verbose', ...args], options({ cwd: work, env }));
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/Resuming the unfinished run/);
    expect(await readFile(target, 'utf8')).toBe(expected);
    expect((await units()) - start).toBe(cleanUnits);
    // Nothing left behind but the state, the output and its run record.
    expect((await readdir(work)).sort()).toEqual(['leads.csv', 'leads.csv.meta.json', 'state']);
  }, 240_000);

  it('refuses to resume a checkpoint of a different command', async () => {
    const work = await scratchDir();
    const state = join(work, 'state');
    await killAfterCheckpoint([...FILTERS, '--state', state, '-o', join(work, 'a.csv')], state, 1, { cwd: work });
    // In process: the checkpoint is the killed process's; what is read from it is main()'s.
    const other = await runInProcess(
      ['pipeline', '-t', 'WordPress', '--state', state, '-o', join(work, 'b.csv')],
      options({ cwd: work }),
    );
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/different command/);
  }, 60_000);

  it('sends a second run on the same state away at once (exit 6, zero requests), while the first holds the lock', async () => {
    // The first run's first request is never answered, so it holds the lock for as long as this test
    // wants: the second run can only finish by not waiting for it (if it waited, this test would time out).
    await withSandbox({ companies: 2000, failRate: 1, faults: ['no-response'] }, async (held) => {
      const work = await scratchDir();
      const state = join(work, 'state');
      const heldOptions = { url: held.url, apiKey: KEY, timeoutMs: 120_000, cwd: work };
      const first = startCli(
        ['--timeout', '600', ...FILTERS, '--state', state, '-o', join(work, 'one.csv')],
        heldOptions,
      );
      const firstDone = finishCli(first, heldOptions);
      await vi.waitFor(() => expect(held.stats().requests.total).toBe(1), { timeout: 25_000, interval: 10 });
      expect(existsSync(join(state, 'lock'))).toBe(true);

      // In process: the lock is the live process's; the run it sends away need not be one.
      const second = await runInProcess([...FILTERS, '--state', state, '-o', join(work, 'two.csv')], heldOptions);
      expect(second.code).toBe(6);
      expect(second.stderr).toMatch(new RegExp(`pid ${first.pid}`));
      // The second run sent nothing, and the lock holder is still where it was, at its first request.
      expect(held.stats().requests.total).toBe(1);
      expect(first.exitCode).toBeNull();
      expect(existsSync(join(work, 'two.csv'))).toBe(false);

      first.kill('SIGTERM');
      expect((await firstDone).code).toBe(143);
      expect(existsSync(join(state, 'lock'))).toBe(false);
    });
  }, 60_000);

  it('sends a run away at once (exit 6, no request) when another host holds the lock, even with a pid dead here', async () => {
    const work = await scratchDir();
    const state = join(work, 'state');
    await mkdir(state, { recursive: true });
    const lock = {
      pid: 2 ** 22 + 17,
      host: 'cron-box-2.example.internal',
      started_at: '2026-01-05T03:00:00.000Z',
      command: 'pipeline',
    };
    await writeFile(join(state, 'lock'), JSON.stringify(lock));
    const before = (await sandboxStats(sandbox.url)).requests.total as number;
    // In process, as the test above: this one is about whose lock.
    const run = await runInProcess([...FILTERS, '--state', state, '-o', join(work, 'a.csv')], options({ cwd: work }));
    expect(run.code).toBe(6);
    expect(run.stderr).toMatch(/cron-box-2\.example\.internal/);
    expect((await sandboxStats(sandbox.url)).requests.total).toBe(before);
    expect(JSON.parse(await readFile(join(state, 'lock'), 'utf8'))).toEqual(lock);
    expect(existsSync(join(work, 'a.csv'))).toBe(false);
  });

  it('publishes the same bytes when the state is on another file system than -o (a copy, not a rename)', async () => {
    const work = await scratchDir();
    // /dev/shm is a tmpfs: another file system than the scratch directory's.
    const elsewhere = await mkdtemp('/dev/shm/prospect-state-');
    try {
      expect(statSync(elsewhere).dev).not.toBe(statSync(work).dev);
      const args = ['pipeline', '-t', 'Shopify', '--country', 'us', '--max', '5'];
      // Both in process: a copy or a rename is main()'s, not the process's.
      const here = await runInProcess(
        [...args, '--state', join(work, 'state'), '-o', join(work, 'here.csv')],
        options({ cwd: work }),
      );
      const across = await runInProcess(
        [...args, '--state', elsewhere, '-o', join(work, 'across.csv')],
        options({ cwd: work }),
      );
      expect([here.code, across.code]).toEqual([0, 0]);
      const expected = await readFile(join(work, 'here.csv'), 'utf8');
      expect(csvRecords(expected).length).toBeGreaterThan(0);
      expect(await readFile(join(work, 'across.csv'), 'utf8')).toBe(expected);
      expect((await readdir(work)).filter((name) => name.includes('prospect-tmp'))).toEqual([]);
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('recovers a lock left by a dead process', async () => {
    const work = await scratchDir();
    const state = join(work, 'state');
    await killAfterCheckpoint([...FILTERS, '--state', state, '-o', join(work, 'a.csv')], state, 1, { cwd: work });
    expect(existsSync(join(state, 'lock'))).toBe(true);
    // In process: the lock left behind is the killed process's; a run of another pid recovers it.
    const again = await runInProcess([...FILTERS, '--state', state, '-o', join(work, 'a.csv')], options({ cwd: work }));
    expect(again.code).toBe(0);
  }, 120_000);

  it('SIGTERM exits 143, keeps the checkpoint, removes temp files and says how to resume', async () => {
    const work = await scratchDir();
    const state = join(work, 'state');
    const child = startCli([...FILTERS, '--state', state, '-o', join(work, 'a.csv')], options({ cwd: work }));
    const finished = finishCli(child, options());
    await waitForCheckpoint(state, 2, child);
    child.kill('SIGTERM');
    const run = await finished;
    expect(run.code).toBe(143);
    expect(run.stderr).toMatch(/run the same command again to resume/);
    expect(existsSync(join(state, 'current', 'checkpoint.json'))).toBe(true);
    expect((await readdir(work)).sort()).toEqual(['state']);
    expect(existsSync(join(state, 'lock'))).toBe(false);
  }, 60_000);

  it('--only-new writes a header-only file the second time, and exactly the difference after the data changes', async () => {
    const work = await scratchDir();
    const state = join(work, 'state');
    const args = (target: string) => [
      'pipeline',
      '-t',
      'Shopify',
      '--country',
      'united states',
      '--seniority',
      'cxo',
      '--state',
      state,
      '--only-new',
      '-o',
      join(work, target),
    ];
    // Every run in process: the ledger and the files are main()'s (the tests above spawn pipelines).
    const first = await runInProcess(args('week1.csv'), options({ cwd: work }));
    expect(first.code).toBe(0);
    const week1 = csvRecords(await readFile(join(work, 'week1.csv'), 'utf8'));
    expect(week1.length).toBeGreaterThan(20);
    const second = await runInProcess(args('week2.csv'), options({ cwd: work }));
    expect(second.code).toBe(0);
    // Nothing new is no warning: a cron job stays silent, and --verbose says it.
    expect(second.stderr).toBe('');
    // Only the stderr of a run with --verbose is looked at.
    const verbose = await runInProcess(['--verbose', ...args('week2-verbose.csv')], { url: sandbox.url, apiKey: KEY });
    // Whose exports left nothing: this job's own earlier runs, counted, and the last of them.
    expect(verbose.stderr).toMatch(
      new RegExp(
        `No new leads: all ${week1.length} leads found had already been exported, ${week1.length} by earlier ` +
          'runs of this job, the last \\(run [\\w-]+, \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\); wrote a header-only result\\.',
      ),
    );
    expect((await readFile(join(work, 'week2.csv'), 'utf8')).trimEnd().split('\n')).toHaveLength(1);
    // The dry run looks its sample up in the same ledger: about every lead would be left out now.
    const dry = await runInProcess(
      [
        ...args('unused.csv').filter((arg, i, all) => arg !== '-o' && all[i - 1] !== '-o'),
        '--dry-run',
        '--format',
        'json',
      ],
      options({ cwd: work }),
    );
    expect(dry.code, dry.stderr).toBe(0);
    const estimate = JSON.parse(dry.stdout);
    expect(Math.abs(estimate.alreadyExported - week1.length) / week1.length).toBeLessThan(0.15);
    expect(estimate.leads).toBeLessThan(week1.length * 0.15);

    await withSandbox({ seed: 6, companies: COMPANIES, asOf: todayUtc() }, async (changed) => {
      // The whole set without --only-new, in process: the reference, not the run under test.
      const all = await runInProcess(
        ['pipeline', '-t', 'Shopify', '--country', 'united states', '--seniority', 'cxo'],
        { url: changed.url, apiKey: KEY },
      );
      const exported = new Set(week1.map((row) => `${row.business_email}|${row.domain}|${row.full_name}`));
      const expected = csvRecords(all.stdout).filter(
        (row) => !exported.has(`${row.business_email}|${row.domain}|${row.full_name}`),
      );
      const third = await runInProcess(args('week3.csv'), { url: changed.url, apiKey: KEY, cwd: work });
      expect(third.code).toBe(0);
      const week3 = csvRecords(await readFile(join(work, 'week3.csv'), 'utf8'));
      expect(week3).toEqual(expected);
      expect(week3.length).toBeGreaterThan(0);
    });
  }, 120_000);

  it('--only-new run twice in a day never replaces the file the first run wrote: exit 2 before any call, no lead lost', async () => {
    const work = await scratchDir();
    const args = (target: string) => [
      'pipeline',
      '-t',
      'Shopify',
      '--seniority',
      'cxo,vp',
      '--max',
      '60',
      '--state',
      'state',
      '--only-new',
      '-o',
      target,
      '--summary',
      'last-run.json',
    ];
    // In process: the file kept and the refusal are main()'s (exit code and stderr included).
    const first = await runInProcess(args('leads-2026-11-23.csv'), options({ cwd: work }));
    expect(first.code).toBe(0);
    const written = await readFile(join(work, 'leads-2026-11-23.csv'), 'utf8');
    const leads = csvRecords(written);
    expect(leads.length).toBeGreaterThan(20);
    // docs/state-directory.md: a run that succeeds leaves no current/ behind (issue 43).
    expect(existsSync(join(work, 'state', 'current'))).toBe(false);
    const success = JSON.parse(await readFile(join(work, 'last-run.json'), 'utf8'));
    expect(success).toMatchObject({ exit_code: 0, complete: true });
    expect(success.last_success).toBeUndefined();

    const before = (await sandboxStats(sandbox.url)).requests.total as number;
    const again = await runInProcess(args('leads-2026-11-23.csv'), options({ cwd: work }));
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      new RegExp(
        `^prospect: leads-2026-11-23\\.csv holds the ${leads.length} leads of the run \\S+ .*counts as exported`,
      ),
    );
    expect(again.stderr).toMatch(/Move or rename leads-2026-11-23\.csv first, or give another -o/);
    // The example is pasted into crontabs, where a bare % ends the command (issue 43).
    expect(again.stderr).toContain('in a crontab write each % as \\%');
    expect((await sandboxStats(sandbox.url)).requests.total).toBe(before);
    expect(await readFile(join(work, 'leads-2026-11-23.csv'), 'utf8')).toBe(written);
    // The failed run's record is the file, and the good run's record it replaced stays inside it (issue 43).
    const failed = JSON.parse(await readFile(join(work, 'last-run.json'), 'utf8'));
    expect(failed.exit_code).toBe(2);
    expect(failed.last_success).toEqual(success);
    // A second failure replaces the first, and still carries the last success, not the failure.
    expect((await runInProcess(args('leads-2026-11-23.csv'), options({ cwd: work }))).code).toBe(2);
    expect(JSON.parse(await readFile(join(work, 'last-run.json'), 'utf8')).last_success).toEqual(success);

    // Given another name, as the hint says, the run goes on; the first file keeps every lead.
    // In the same directory.
    const renamed = await runInProcess(args('leads-2026-11-23-1130.csv'), options({ cwd: work }));
    expect(renamed.code).toBe(0);
    expect(csvRecords(await readFile(join(work, 'leads-2026-11-23-1130.csv'), 'utf8'))).toEqual([]);
    expect(await readFile(join(work, 'leads-2026-11-23.csv'), 'utf8')).toBe(written);
  }, 120_000);

  it('joins exactly what companies | contacts give for the same filters', async () => {
    const filters = ['-t', 'Shopify', '-T', 'Klaviyo', '--country', 'united states', '--employee-range', '11-500'];
    // In process: the rows are main()'s, and so is the reference, companies | contacts.
    const pipeline = await runInProcess(
      ['pipeline', ...filters, '--seniority', 'cxo,vp', '--format', 'ndjson'],
      options(),
    );
    expect(pipeline.code).toBe(0);
    const companies = await runInProcess(['companies', ...filters, '--format', 'ndjson'], options());
    const contacts = await runInProcess(
      ['contacts', '--seniority', 'cxo,vp', '--format', 'ndjson'],
      options({ input: companies.stdout }),
    );
    const byDomain = new Map(
      companies.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line))
        .map((row) => [row.domain, row]),
    );
    const joined = contacts.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
      .map((contact) => {
        const company = byDomain.get(contact.domain);
        return {
          ...contact,
          company_name: company.company_name,
          employee_range: company.employee_range,
          industry: company.industry,
          country: company.country,
          crux_rank: company.crux_rank,
          technologies: company.technologies,
        };
      });
    const rows = pipeline.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows).toEqual(joined);
    expect(rows.length).toBeGreaterThan(10);
  }, 60_000);

  it.skipIf(SCRIPT.skip)(
    'on a terminal, the progress line counts to --max, not to the whole listing',
    async () => {
      const out = join(await scratchDir(), 'leads.csv');
      // Every answer takes 150 ms, so the line is drawn many times whatever the machine's load.
      await withSandbox({ seed: 5, companies: COMPANIES, latencyMs: 150 }, async (slow) => {
        const slowOptions = { url: slow.url, apiKey: KEY, timeoutMs: 120_000 };
        const child = startOnTerminal(
          ['--page-size', '50', 'pipeline', '-t', 'Shopify', '--max', '200', '-o', out],
          { columns: 120, rows: 40 },
          slowOptions,
        );
        child.stdin!.end();
        const run = await finishCli(child, slowOptions);
        expect(run.code, run.stdout).toBe(0);
        const shown = [...run.stdout.matchAll(/(\d[\d,]*)\/(\d[\d,]*) companies/g)].map((match) => match[2]);
        expect(shown.length).toBeGreaterThan(0);
        expect(new Set(shown)).toEqual(new Set(['200']));
      });
    },
    120_000,
  );
});
