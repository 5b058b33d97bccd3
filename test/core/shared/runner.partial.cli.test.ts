/**
 * Honest partial output (issue 36): rows that went to stdout (a file through `>`, or a pipe) before
 * a run was cut short cannot be taken back, so the run's last stderr line says the output is
 * incomplete and how many rows it holds, and --summary records `complete: false`. "Nothing was left
 * half-written" is said only where it is true: -o FILE.
 */
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, SANDBOX_KEYS, type RunningSandbox } from '../../../src/sandbox/index.js';
import { finishCli, runInProcess, runShell, scratchDir, startCli } from '../../helpers/cli.js';
import { sandboxStats } from '../../helpers/independent-client.js';

const KEY = SANDBOX_KEYS.growth;
let slow: RunningSandbox;
let failing: RunningSandbox;

beforeAll(async () => {
  // Every page takes 300 ms: a jQuery listing (tens of pages) is surely still running when it is stopped.
  slow = await startSandbox({ port: 0, latencyMs: 300 });
  // The first three requests are answered, then every one fails: the run ends with exit 5 after its rows.
  failing = await startSandbox({ port: 0, failRate: 1, faults: ['500'], faultsAfter: 3 });
});
afterAll(async () => {
  await slow?.close();
  await failing?.close();
});

const lastLine = (stderr: string) => stderr.trimEnd().split('\n').at(-1) ?? '';
const dataRows = (csv: string) => csv.split('\n').filter(Boolean).length - 1;

describe('stdout cut short', () => {
  it('SIGTERM to `companies > f.csv`: the last line says incomplete with the rows; complete: false', async () => {
    const dir = await scratchDir();
    // The signal goes once the file holds rows (not after a fixed time), as `timeout -s TERM 4` would. The
    // file exists before the loop reads it: the background job's redirect may not have made it yet.
    const run = await runShell(
      ': > f.csv; eval "exec $PROSPECT companies -t jQuery --summary s.json" > f.csv & pid=$!; ' +
        'until [ "$(wc -l < f.csv)" -gt 1 ]; do sleep 0.05; done; kill -TERM $pid; wait $pid',
      { url: slow.url, apiKey: KEY, cwd: dir },
    );
    expect(run.code).toBe(143);
    const rows = dataRows(await readFile(join(dir, 'f.csv'), 'utf8'));
    expect(rows).toBeGreaterThan(0);
    expect(run.stderr).not.toMatch(/half-written/);
    expect(lastLine(run.stderr)).toBe(
      `prospect: the output on stdout is incomplete: ${rows.toLocaleString('en-US')} companies written before ` +
        'the run stopped; -o FILE writes a file whole or not at all.',
    );
    const summary = JSON.parse(await readFile(join(dir, 's.json'), 'utf8'));
    expect(summary).toMatchObject({ complete: false, exit_code: 143 });
  }, 60_000);

  it('SIGTERM again while the run stops (`timeout` signals the command and its group): the same last line', async () => {
    const dir = await scratchDir();
    // Before the fix the second SIGTERM meant "exit now": the run died before its last line or its summary.
    const run = await runShell(
      ': > f.csv; eval "exec $PROSPECT companies -t jQuery --summary s.json" > f.csv & pid=$!; ' +
        'until [ "$(wc -l < f.csv)" -gt 1 ]; do sleep 0.05; done; kill -TERM $pid; ' +
        'for i in 1 2 3 4 5 6 7 8; do sleep 0.002; kill -TERM $pid 2>/dev/null; done; wait $pid',
      { url: slow.url, apiKey: KEY, cwd: dir },
    );
    expect(run.code).toBe(143);
    const rows = dataRows(await readFile(join(dir, 'f.csv'), 'utf8'));
    expect(run.stderr).toMatch(/^prospect: interrupted by SIGTERM\.\n/);
    expect(lastLine(run.stderr)).toMatch(
      new RegExp(`^prospect: the output on stdout is incomplete: ${rows.toLocaleString('en-US')} companies written`),
    );
    expect(JSON.parse(await readFile(join(dir, 's.json'), 'utf8'))).toMatchObject({ complete: false, exit_code: 143 });
  }, 60_000);

  it('`timeout -s TERM 4 prospect companies -t jQuery > f.csv`, as issue 36 ran it', async () => {
    const dir = await scratchDir();
    const run = await runShell('eval "timeout -s TERM 4 $PROSPECT companies -t jQuery --summary s.json" > f.csv', {
      url: slow.url,
      apiKey: KEY,
      cwd: dir,
    });
    // timeout exits 124 for a command it had to stop; the listing cannot end in 4 s at 300 ms a page.
    expect(run.code).toBe(124);
    const rows = dataRows(await readFile(join(dir, 'f.csv'), 'utf8'));
    // On a loaded machine the 4 s can end before the first page: then no row is cut, and the run says
    // so (the test above stops a run that holds rows, whatever the load).
    expect(lastLine(run.stderr)).toMatch(
      rows > 0
        ? new RegExp(`^prospect: the output on stdout is incomplete: ${rows.toLocaleString('en-US')} compan`)
        : /^prospect: interrupted by SIGTERM; nothing was left half-written\.$/,
    );
    expect(JSON.parse(await readFile(join(dir, 's.json'), 'utf8'))).toMatchObject({ complete: false });
  }, 60_000);

  it('exit 5 into a pipe: the last line says incomplete, with the rows that went through', async () => {
    const dir = await scratchDir();
    // In process: no signal, and stdout is a pipe there too; the rows that went through are its stdout.
    const run = await runInProcess(
      ['--max-retries', '0', '--page-size', '100', 'companies', '-t', 'jQuery', '--summary', 's.json'],
      { url: failing.url, apiKey: KEY, cwd: dir },
    );
    expect(run.code).toBe(5);
    const rows = dataRows(run.stdout);
    expect(rows).toBeGreaterThan(0);
    expect(lastLine(run.stderr)).toMatch(
      new RegExp(`^prospect: the output on stdout is incomplete: ${rows.toLocaleString('en-US')} companies written`),
    );
    expect(JSON.parse(await readFile(join(dir, 's.json'), 'utf8'))).toMatchObject({ complete: false, exit_code: 5 });
  }, 60_000);

  it('-o FILE: nothing half-written, and said so; a complete run records complete: true', async () => {
    const dir = await scratchDir();
    const before = (await sandboxStats(slow.url)).requests.companies as number;
    const child = startCli(['companies', '-t', 'jQuery', '-o', join(dir, 'f.csv')], { url: slow.url, apiKey: KEY });
    const finished = finishCli(child, { apiKey: KEY });
    // Stopped once a page was asked for: the run is in its work, its rows in a temporary file.
    while ((await sandboxStats(slow.url)).requests.companies === before) await sleep(20);
    child.kill('SIGTERM');
    const run = await finished;
    expect(run.code).toBe(143);
    expect(lastLine(run.stderr)).toBe('prospect: interrupted by SIGTERM; nothing was left half-written.');
    expect(await readdir(dir)).toEqual([]);

    // In process: a run that ends by itself; its summary is main()'s.
    const done = await runInProcess(['companies', '-t', 'Shopify', '--max', '5', '--summary', 's.json'], {
      url: slow.url,
      apiKey: KEY,
      cwd: dir,
    });
    expect(done.code).toBe(0);
    expect(JSON.parse(await readFile(join(dir, 's.json'), 'utf8'))).toMatchObject({ complete: true, exit_code: 0 });
  }, 60_000);
});
