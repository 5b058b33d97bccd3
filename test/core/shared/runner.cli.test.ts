/**
 * What every job shares, through the spawned binary: the --summary record says the exit code the
 * process exits with (one decision, exitCodeOf), also for a run that fails before its job starts (every
 * early exit rewrites the file), and a state file that prospect reads back but finds damaged stops the
 * run with exit 2, naming the file and how to start over.
 *
 * Spawned: SIGTERM, a full disk (`ulimit -f`), `| head` and one early exit, the binary's exit code
 * through a real process. The rest (the other early exits, the damaged state files and the runs
 * that follow one up) are main()'s decisions and files: the same main() in process (runInProcess,
 * the same environment, exit code and key-leak checks).
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, SANDBOX_KEYS, type RunningSandbox } from '../../../src/sandbox/index.js';
import { finishCli, runCli, runInProcess, runShell, scratchDir, startCli } from '../../helpers/cli.js';
import { sandboxStats } from '../../helpers/independent-client.js';

const KEY = SANDBOX_KEYS.growth;
let slow: RunningSandbox;
let fast: RunningSandbox;
let domains: string;

beforeAll(async () => {
  // Every contacts call takes half a second: a run is surely mid-work while one is in flight.
  slow = await startSandbox({ port: 0, seed: 3, companies: 20_000, latencyMs: 500 });
  fast = await startSandbox({ port: 0, seed: 3, companies: 20_000 });
  // The contacts runs' input, made in process: not under test here.
  const companies = await runInProcess(['companies', '-t', 'jQuery', '--max', '400', '--columns', 'domain'], {
    url: fast.url,
    apiKey: KEY,
  });
  expect(companies.code).toBe(0);
  domains = companies.stdout;
});
afterAll(async () => {
  await slow?.close();
  await fast?.close();
});

const noStackTrace = (stderr: string) => expect(stderr).not.toMatch(/\n\s+at /);

/** Resolves once the sandbox has received a contacts call beyond `before`: the run is in its work. */
async function untilContactsCall(before: number, child: ReturnType<typeof startCli>): Promise<void> {
  for (let waited = 0; waited < 30_000 && child.exitCode === null; waited += 20) {
    if ((await sandboxStats(slow.url)).requests.contacts > before) return;
    await sleep(20);
  }
  throw new Error('the run never called the contacts endpoint');
}

describe('SIGTERM: the summary records the exit code the process exits with', () => {
  it.each([
    { name: 'contacts', args: ['contacts', '--limit', '20'], input: () => domains },
    { name: 'pipeline', args: ['--page-size', '50', 'pipeline', '-t', 'jQuery', '--state', 'state'], input: () => '' },
  ])(
    '$name --summary exits 143 and says "exit_code": 143',
    async ({ name, args, input }) => {
      const dir = await scratchDir();
      const summaryPath = join(dir, 's.json');
      const before = (await sandboxStats(slow.url)).requests.contacts as number;
      const child = startCli([...args, '--summary', summaryPath, '-o', join(dir, 'out.csv')], {
        url: slow.url,
        apiKey: KEY,
        cwd: dir,
      });
      child.stdin!.end(input());
      const finished = finishCli(child, { apiKey: KEY, cwd: dir });
      await untilContactsCall(before, child);
      child.kill('SIGTERM');
      const run = await finished;

      expect(run.code).toBe(143);
      expect(run.stderr).toMatch(/interrupted by SIGTERM/);
      noStackTrace(run.stderr);
      const summary = JSON.parse(await readFile(summaryPath, 'utf8'));
      expect(summary.command).toBe(name);
      expect(summary.exit_code).toBe(143);
      expect(typeof summary.finished_at).toBe('string');
      expect(existsSync(join(dir, 'out.csv'))).toBe(false);
    },
    60_000,
  );
});

describe('a full disk: the summary records the exit code the process exits with', () => {
  // `ulimit -f` (in 1024-byte blocks) caps every file the run writes; with SIGXFSZ ignored a write past
  // it fails with EFBIG, as a write to a full disk fails with ENOSPC. The summary itself stays under it.
  it('contacts --summary exits 7 and says "exit_code": 7', async () => {
    const dir = await scratchDir();
    const run = await runShell(`trap '' XFSZ; ulimit -f 16; eval "$PROSPECT contacts --summary s.json -o out.csv"`, {
      url: fast.url,
      apiKey: KEY,
      cwd: dir,
      input: domains,
    });

    expect(run.code).toBe(7);
    expect(run.stderr).toMatch(/^prospect: could not write.*EFBIG/);
    noStackTrace(run.stderr);
    const summary = JSON.parse(await readFile(join(dir, 's.json'), 'utf8'));
    expect(summary.exit_code).toBe(7);
    expect(summary.error).toMatch(/EFBIG|too large/i);
    expect(await readdir(dir)).toEqual(['s.json']);
  }, 60_000);
});

describe('every early exit rewrites --summary with its exit code', () => {
  /** Last week's record of a success: what a monitor would read if a failure left the file alone. */
  const LAST_WEEK = `${JSON.stringify({ command: 'pipeline', exit_code: 0, last_week: true })}\n`;

  async function failingRun(dir: string, args: string[], options: { env?: Record<string, string> } = {}) {
    const summaryPath = join(dir, 'last-run.json');
    await writeFile(summaryPath, LAST_WEEK);
    const before = (await sandboxStats(fast.url)).requests.total as number;
    const run = await runInProcess([...args, '--summary', summaryPath], {
      url: fast.url,
      apiKey: KEY,
      env: options.env,
    });
    expect((await sandboxStats(fast.url)).requests.total).toBe(before);
    return { run, summary: JSON.parse(await readFile(summaryPath, 'utf8')) };
  }

  it('a bad flag value (spawned): exit 2, and the summary says 2 with the reason', async () => {
    const dir = await scratchDir();
    await writeFile(join(dir, 'last-run.json'), LAST_WEEK);
    const run = await runCli(['pipeline', '-t', 'Shopify', '--max', '0', '--summary', 'last-run.json'], {
      url: fast.url,
      apiKey: KEY,
      cwd: dir,
    });
    expect(run.code).toBe(2);
    const summary = JSON.parse(await readFile(join(dir, 'last-run.json'), 'utf8'));
    expect(summary).toMatchObject({
      command: 'pipeline',
      exit_code: 2,
      rows: 0,
      error: expect.stringContaining('--max'),
    });
    expect(summary.last_week).toBeUndefined();
    expect(typeof summary.finished_at).toBe('string');
  }, 60_000);

  it.each([
    { name: 'an unknown flag', code: 2, args: () => ['companies', '-t', 'Shopify', '--formt', 'csv'] },
    { name: 'a missing input file', code: 2, args: () => ['contacts', '--domains-file', '/nonexistent/accounts.csv'] },
    {
      name: 'a missing output folder',
      code: 7,
      args: () => ['companies', '-t', 'Shopify', '-o', '/nonexistent/out.csv'],
    },
    {
      name: 'a paid run without a budget, off a terminal',
      code: 2,
      args: (dir: string) => ['pipeline', '-t', 'Shopify', '--stale', 'verify', '--state', join(dir, 'state')],
    },
    { name: 'a read-only output', code: 7, args: () => ['verify', 'ana@example.com', '-o', '/proc/version'] },
  ])(
    '$name: exit $code, and the summary says so',
    async ({ code, args }) => {
      const dir = await scratchDir();
      const { run, summary } = await failingRun(dir, args(dir));
      expect(run.code).toBe(code);
      expect(summary).toMatchObject({ exit_code: code, command: args(dir)[0] });
      expect(summary.error).toBeTruthy();
    },
    60_000,
  );

  it('a standing exclusion list that is gone: exit 2, and the summary says so', async () => {
    const dir = await scratchDir();
    const config = join(dir, 'config');
    const list = join(dir, 'customers.csv');
    await writeFile(list, 'Website\nacme.com\n');
    expect(
      (await runInProcess(['config', 'set', 'exclude-domains', list], { env: { PROSPECT_CONFIG_DIR: config } })).code,
    ).toBe(0);
    await rm(list);
    const { run, summary } = await failingRun(dir, ['companies', '-t', 'Shopify'], {
      env: { PROSPECT_CONFIG_DIR: config },
    });
    expect(run.code).toBe(2);
    expect(summary).toMatchObject({ exit_code: 2, command: 'companies' });
  }, 60_000);

  it('the state held by another run: exit 6, and the summary says so', async () => {
    const dir = await scratchDir();
    await mkdir(join(dir, 'state'), { recursive: true });
    await writeFile(
      join(dir, 'state', 'lock'),
      JSON.stringify({ pid: process.pid, host: hostname(), started_at: new Date().toISOString(), command: 'pipeline' }),
    );
    const { run, summary } = await failingRun(dir, ['pipeline', '-t', 'Shopify', '--state', join(dir, 'state')]);
    expect(run.code).toBe(6);
    expect(summary).toMatchObject({ exit_code: 6, command: 'pipeline' });
  }, 60_000);

  it('filters that match nobody: exit 3, and no_match_reason says why', async () => {
    const dir = await scratchDir();
    const summaryPath = join(dir, 'last-run.json');
    const run = await runInProcess(['companies', '-t', 'Shopify', '-t', 'WordPress', '--summary', summaryPath], {
      url: fast.url,
      apiKey: KEY,
    });
    expect(run.code).toBe(3);
    const summary = JSON.parse(await readFile(summaryPath, 'utf8'));
    expect(summary.exit_code).toBe(3);
    expect(summary.no_match_reason).toMatch(/^no company matched all the filters/);
  }, 60_000);
});

describe('| head: the reader closes stdout', () => {
  it('pipeline --state --only-new | head -3: exit 0, silent, a summary that says stdout was closed; the leads are not lost', async () => {
    const dir = await scratchDir();
    // About 500 KB of leads: far more than a pipe holds (64 KB), so head's exit always breaks it.
    const args = '--page-size 50 pipeline -t Shopify --max 100 --state state --only-new --summary run.json';
    const run = await runShell(`eval "$PROSPECT ${args}" | head -3`, { url: fast.url, apiKey: KEY, cwd: dir });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout.trimEnd().split('\n')).toHaveLength(3);
    const summary = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
    expect(summary).toMatchObject({ command: 'pipeline', exit_code: 0, stdout_closed: true });
    expect(summary.rows).toBeGreaterThan(3);
    // The cut output was not counted as exported: the next run publishes every one of those leads.
    // In process: what follows up on the state the piped run left.
    const again = await runInProcess([...args.split(' '), '-o', 'leads.csv'], { url: fast.url, apiKey: KEY, cwd: dir });
    expect(again.code).toBe(0);
    const leads = (await readFile(join(dir, 'leads.csv'), 'utf8')).trimEnd().split('\n');
    expect(leads.length - 1).toBe(summary.rows);
    expect(leads.slice(0, 3)).toEqual(run.stdout.trimEnd().split('\n'));
  }, 60_000);
});

describe('a damaged state file stops the run with exit 2, names the file and says how to start over', () => {
  it.each([
    ['not JSON', '{"version":1,"run_id":"2026'],
    [
      'a field of the wrong type',
      JSON.stringify({
        version: 1,
        run_id: 'r',
        fingerprint: 'f',
        command: 'pipeline',
        now: '2026-01-01T00:00:00.000Z',
        cursor: null,
        listing_done: false,
        meta: null,
        output_bytes: 'many',
        keys_bytes: 0,
        rows_written: 0,
        pages_done: 0,
        counters: {},
      }),
    ],
  ])(
    'pipeline --state with a checkpoint that is %s',
    async (_what, content) => {
      const dir = await scratchDir();
      const checkpoint = join(dir, 'state', 'current', 'checkpoint.json');
      await mkdir(join(dir, 'state', 'current'), { recursive: true });
      await writeFile(checkpoint, content);
      const before = (await sandboxStats(fast.url)).requests.total as number;

      const run = await runInProcess(['pipeline', '-t', 'Shopify', '--state', 'state', '-o', 'leads.csv'], {
        url: fast.url,
        apiKey: KEY,
        cwd: dir,
      });

      expect(run.code).toBe(2);
      expect(run.stderr).toContain(
        `prospect: the checkpoint ${join('state', 'current', 'checkpoint.json')} is damaged`,
      );
      expect(run.stderr).toContain(`Remove ${join('state', 'current')} to start over`);
      noStackTrace(run.stderr);
      expect(run.stdout).toBe('');
      expect((await sandboxStats(fast.url)).requests.total).toBe(before);
      // The hint is true: without current/ the same command runs from the start.
      const again = await runInProcess(
        [
          'pipeline',
          '-t',
          'Shopify',
          '--seniority',
          'cxo',
          '--per-company',
          '1',
          '--max',
          '20',
          '--state',
          'fresh',
          '-o',
          'leads.csv',
        ],
        { url: fast.url, apiKey: KEY, cwd: dir },
      );
      expect(again.code).toBe(0);
    },
    60_000,
  );

  it('verify with a cache file whose line was damaged', async () => {
    const dir = await scratchDir();
    const cache = join(dir, 'cache');
    const env = { PROSPECT_CACHE_DIR: cache };
    const first = await runInProcess(['verify', '--yes', 'ana@example.com', 'bob@example.com', '--format', 'ndjson'], {
      url: fast.url,
      apiKey: KEY,
      cwd: dir,
      env,
    });
    expect(first.code).toBe(0);
    const [name] = await readdir(cache);
    const path = join(cache, name!);
    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines).toHaveLength(3); // two results and the final newline
    await writeFile(path, [JSON.stringify({ key: 'ana@example.com', status: 42 }), ...lines.slice(1)].join('\n'));

    const run = await runInProcess(['verify', '--yes', 'ana@example.com', '--format', 'ndjson'], {
      url: fast.url,
      apiKey: KEY,
      cwd: dir,
      env,
    });

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`prospect: the verification ledger ${path}:1 is damaged`);
    expect(run.stderr).toContain(`Remove ${path} to start over`);
    noStackTrace(run.stderr);
    expect(run.stdout).toBe('');
  }, 60_000);

  it('verify with a cache whose last line was torn by a crash mid-append: the torn line is dropped, the run goes on', async () => {
    const dir = await scratchDir();
    const cache = join(dir, 'cache');
    const env = { PROSPECT_CACHE_DIR: cache };
    expect(
      (
        await runInProcess(['verify', '--yes', 'ana@example.com', '--format', 'ndjson'], {
          url: fast.url,
          apiKey: KEY,
          cwd: dir,
          env,
        })
      ).code,
    ).toBe(0);
    const [name] = await readdir(cache);
    const path = join(cache, name!);
    const complete = await readFile(path, 'utf8');
    await writeFile(path, `${complete}{"key":"bob@example.com","email":"bob@exa`);

    const run = await runInProcess(['verify', '--yes', 'ana@example.com', 'bob@example.com', '--format', 'ndjson'], {
      url: fast.url,
      apiKey: KEY,
      cwd: dir,
      env,
    });

    expect(run.code).toBe(0);
    expect(run.stdout.trimEnd().split('\n')).toHaveLength(2);
    // The cache is whole again: the old line, then bob's new one; the torn fragment is gone.
    const after = (await readFile(path, 'utf8')).split('\n');
    expect(after[0]).toBe(complete.trimEnd());
    expect(JSON.parse(after[1]!).key).toBe('bob@example.com');
    expect(after).toHaveLength(3);
  }, 60_000);
});
