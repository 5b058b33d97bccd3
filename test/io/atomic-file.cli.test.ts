/**
 * The file system turns against a run: the disk fills up mid-export, the final rename is refused,
 * the process is killed outright. Whatever happens, the target holds either its old content or the
 * whole new export, never a part of one, and no debris is left beside it (after SIGKILL, which no
 * process can clean up after, the temp file stays until the next run for that target removes it).
 *
 * A full disk is simulated without root or a mount: `ulimit -f` caps the size of any file the run
 * writes, and with SIGXFSZ ignored (`trap '' XFSZ`, inherited across exec) a write past the cap fails
 * with EFBIG, the way a write to a full disk fails with ENOSPC: the same error path.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishCli, runInProcess, runShell, scratchDir, startCli, type CliRun } from '../helpers/cli.js';
import { SANDBOX_KEYS, startTestSandbox, todayUtc, type RunningSandbox } from '../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
/** 24 KiB (bash counts -f in 1024-byte blocks): the exports ledger's five pages fit, a few pages of output, far less than a whole export. */
const FULL_DISK = `trap '' XFSZ; ulimit -f 24;`;

let fast: RunningSandbox;
let slow: RunningSandbox;
beforeAll(async () => {
  fast = await startTestSandbox({ seed: 3, companies: 20_000, asOf: todayUtc() });
  // 100 ms a page: a run is still writing when the test interferes.
  slow = await startTestSandbox({ seed: 3, companies: 20_000, asOf: todayUtc(), latencyMs: 100 });
});
afterAll(async () => {
  await fast?.close();
  await slow?.close();
});

/** Waits until the run has its temp file open beside the target: it is mid-export. `ended` says the run is over. */
async function untilTempFile(dir: string, ended: () => boolean): Promise<string> {
  for (let waited = 0; waited < 20_000 && !ended(); waited += 20) {
    const temp = (await readdir(dir)).find((name) => name.includes('.prospect-tmp-'));
    if (temp) return temp;
    await sleep(20);
  }
  throw new Error('the run never opened its temp file');
}

const noStackTrace = (stderr: string) => expect(stderr).not.toMatch(/\n\s+at /);

const HEADROOM = { timeout: 90_000 };
// 3-8 s a case on a busy machine; they ran into the default 30 s with a second suite beside them.
describe('a full disk', HEADROOM, () => {
  it('mid-export with -o: fails with one message naming the error, the old file untouched, no temp file, no sidecar', async () => {
    const dir = await scratchDir();
    await writeFile(join(dir, 'out.csv'), 'last week\n');
    const run = await runShell(`${FULL_DISK} eval "$PROSPECT companies -t React -o out.csv"`, {
      url: fast.url,
      apiKey: KEY,
      cwd: dir,
    });
    expect(run.code).toBe(7);
    expect(run.stderr).toMatch(/^prospect: could not write.*EFBIG/);
    noStackTrace(run.stderr);
    expect(await readFile(join(dir, 'out.csv'), 'utf8')).toBe('last week\n');
    expect(await readdir(dir)).toEqual(['out.csv']);
  });

  it('mid-run with pipeline --state: the checkpoint survives, and with space again the same command resumes to byte-identical output', async () => {
    const dir = await scratchDir();
    // 400 companies in 8 pages: 68 KB of leads, so the disk fills a few pages in, with pages still to list.
    const args = (state: string, out: string) =>
      `--page-size 50 pipeline -t React --seniority cxo --max 400 --state ${state} -o ${out}`;
    // The reference and the resumed run in process (main()'s files and bytes); the run on the full disk is spawned.
    const clean = await runInProcess(args('reference', 'reference.csv').split(' '), {
      url: fast.url,
      apiKey: KEY,
      cwd: dir,
    });
    expect(clean.code).toBe(0);

    // 512 KiB: the state's files open (the snapshots' shared memory alone is 32 KiB), and the listing's
    // snapshot, about 1.5 KB a company in its write-ahead log, fills it a few pages in.
    const full = await runShell(`trap '' XFSZ; ulimit -f 512; eval "$PROSPECT ${args('state', 'leads.csv')}"`, {
      url: fast.url,
      apiKey: KEY,
      cwd: dir,
    });
    expect(full.code).toBe(7);
    expect(full.stderr).toMatch(
      /^prospect: could not write .*(EFBIG|SQLITE_FULL|SQLITE_IOERR)[^\n]*\n[^\n]*\nprospect: the checkpoint .* run the same command again to resume/,
    );
    noStackTrace(full.stderr);
    expect(existsSync(join(dir, 'leads.csv'))).toBe(false);
    const checkpoint = JSON.parse(await readFile(join(dir, 'state', 'current', 'checkpoint.json'), 'utf8'));
    expect(checkpoint.pages_done).toBeGreaterThanOrEqual(1);
    expect(checkpoint.listing_done).toBe(false);

    const resumed = await runInProcess(['--verbose', ...args('state', 'leads.csv').split(' ')], {
      url: fast.url,
      apiKey: KEY,
      cwd: dir,
    });
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/Resuming the unfinished run/);
    expect(await readFile(join(dir, 'leads.csv'), 'utf8')).toBe(await readFile(join(dir, 'reference.csv'), 'utf8'));
  });
});

describe('the final rename is refused', () => {
  it('(the target became a directory mid-run): fails with one message, leaves the directory as it was, no temp file, no sidecar', async () => {
    const dir = await scratchDir();
    const target = join(dir, 'out.csv');
    // In process: the rename and what follows its refusal are main()'s; the run goes on in its worker
    // thread while this test makes the directory.
    let ended = false;
    const finished: Promise<CliRun> = runInProcess(['--page-size', '200', 'companies', '-t', 'React', '-o', target], {
      url: slow.url,
      apiKey: KEY,
      cwd: dir,
    }).finally(() => (ended = true));
    await untilTempFile(dir, () => ended);
    await mkdir(join(target, 'inside'), { recursive: true });
    const run = await finished;
    expect(run.code).toBe(7);
    expect(run.stderr).toMatch(/^prospect: could not write.*(EISDIR|ENOTEMPTY|EEXIST)/);
    noStackTrace(run.stderr);
    expect(await readdir(dir)).toEqual(['out.csv']);
    expect(await readdir(target)).toEqual(['inside']);
  });
});

describe('SIGKILL', () => {
  it('mid-export with -o: the old file is untouched; the temp file left beside it goes with the next run', async () => {
    const dir = await scratchDir();
    const target = join(dir, 'out.csv');
    await writeFile(target, 'last week\n');
    const child = startCli(['--page-size', '200', 'companies', '-t', 'React', '-o', target], {
      url: slow.url,
      apiKey: KEY,
      cwd: dir,
    });
    child.stdin!.end();
    const finished = finishCli(child, { apiKey: KEY, cwd: dir });
    const temp = await untilTempFile(dir, () => child.exitCode !== null);
    await sleep(200);
    child.kill('SIGKILL');
    expect((await finished).signal).toBe('SIGKILL');
    expect(await readFile(target, 'utf8')).toBe('last week\n');
    expect((await readdir(dir)).sort()).toEqual([temp, 'out.csv'].sort());
    expect(temp).toMatch(/^\.out\.csv\.prospect-tmp-\d+-[0-9a-f]+$/);
    // The next run for the same target removes the dead run's debris, and replaces the target whole
    // (in process: the clean-up is main()'s; the run killed above was a process).
    const again = await runInProcess(['companies', '-t', 'React', '--max', '5', '-o', target], {
      url: fast.url,
      apiKey: KEY,
      cwd: dir,
    });
    expect(again.code).toBe(0);
    expect((await readFile(target, 'utf8')).trimEnd().split('\n')).toHaveLength(6);
    expect((await readdir(dir)).sort()).toEqual(['out.csv', 'out.csv.meta.json']);
  });

  it("the temp files of a dead run's sidecar and --summary go with the next run; a live run's stay", async () => {
    const dir = await scratchDir();
    // A process that has exited: its pid names no one. The live one is vitest's main process, not this
    // one, where the run below goes on (in process: the clean-up is main()'s, and so is the pid check).
    const dead = spawnSync('true').pid;
    const live = process.ppid;
    const temps = (pid: number) => [
      `.out.csv.meta.json.prospect-tmp-${pid}-0a1b2c3d`,
      `.run.json.prospect-tmp-${pid}-0a1b2c3d`,
    ];
    for (const name of [...temps(dead), ...temps(live)]) await writeFile(join(dir, name), '{"half":');
    const run = await runInProcess(
      ['companies', '-t', 'React', '--max', '5', '-o', 'out.csv', '--summary', 'run.json'],
      {
        url: fast.url,
        apiKey: KEY,
        cwd: dir,
      },
    );
    expect(run.code).toBe(0);
    expect((await readdir(dir)).sort()).toEqual(['out.csv', 'out.csv.meta.json', 'run.json', ...temps(live)].sort());
  });
});
