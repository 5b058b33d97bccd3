/**
 * Where -o and --summary write, as a user names it: a regular file is written beside and renamed
 * over; a device, a FIFO, /dev/stdout or a descriptor is written directly, never replaced and given
 * no sidecar; `-o -` is stdout. A read-only file is never replaced (exit 7, before any call). Files
 * the person asked for get 0666 less the umask, with or without --state.
 *
 * The device cases as root use a private device node (mknod, the same device as /dev/null) rather
 * than /dev/null itself: a regression would then replace a file of this test, not the machine's
 * /dev/null under the other tests running at the same time. /dev/null itself is written by a
 * non-root user (setpriv), for whom replacing it used to fail with exit 7.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, cp, lstat, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, runShell, scratchDir, type CliOptions } from '../helpers/cli.js';
import { findProgram } from '../helpers/programs.js';
import { sandboxStats } from '../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, todayUtc, type RunningSandbox } from '../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
const IS_ROOT = process.getuid?.() === 0;
const SETPRIV = findProgram('setpriv');
const COMPANIES = ['companies', '-t', 'Shopify', '--max', '5'];

let sandbox: RunningSandbox;
/** What `companies` writes to stdout without -o: the bytes every other target must receive. */
let reference: string;
beforeAll(async () => {
  sandbox = await startTestSandbox({ seed: 3, companies: 5_000, asOf: todayUtc() });
  // The reference, in process (the same main()): the targets below are the spawned runs.
  const run = await runInProcess(COMPANIES, { url: sandbox.url, apiKey: KEY });
  expect(run.code).toBe(0);
  reference = run.stdout;
  expect(reference.split('\n')).toHaveLength(7); // a header, five rows, the final newline
});
afterAll(async () => {
  await sandbox?.close();
});

const requests = async () => (await sandboxStats(sandbox.url)).requests.total as number;
const temps = async (dir: string) => (await readdir(dir)).filter((name) => name.includes('.prospect-tmp-'));

describe('-o and --summary to what is not a regular file', () => {
  it('-o /dev/stdout and -o /proc/self/fd/1: the rows on stdout, /dev/stdout still a link, no sidecar', async () => {
    for (const target of ['/dev/stdout', '/proc/self/fd/1']) {
      const run = await runCli([...COMPANIES, '-o', target], { url: sandbox.url, apiKey: KEY });
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(reference);
    }
    expect((await lstat('/dev/stdout')).isSymbolicLink()).toBe(true);
    expect(existsSync('/dev/stdout.meta.json')).toBe(false);
    expect((await readdir('/dev')).filter((name) => name.includes('.prospect-tmp-'))).toEqual([]);
  });

  it('-o - (in process): stdout, and no file named "-"', async () => {
    const run = await runInProcess([...COMPANIES, '-o', '-'], { url: sandbox.url, apiKey: KEY });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(reference);
    expect(existsSync('-')).toBe(false);
  });

  it('--summary /dev/stdout (in process): the run record on stdout, after the file is written', async () => {
    const dir = await scratchDir();
    const out = join(dir, 'out.csv');
    const run = await runInProcess([...COMPANIES, '-o', out, '--summary', '/dev/stdout'], {
      url: sandbox.url,
      apiKey: KEY,
    });
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({ command: 'companies', rows: 5, exit_code: 0, output: out });
    expect(await readFile(out, 'utf8')).toBe(reference);
  });

  // In process: what -o does with a FIFO is main()'s; the pipeline into a FIFO below is spawned.
  it('a FIFO (in process): its reader gets the rows; it stays a FIFO, with no sidecar and no temp file beside it', async () => {
    const dir = await scratchDir();
    const fifo = join(dir, 'rows');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const received = readAll(fifo);
    const run = await runInProcess([...COMPANIES, '-o', fifo, '--summary', join(dir, 'run.json')], {
      url: sandbox.url,
      apiKey: KEY,
    });
    expect(run.stderr).not.toMatch(/^prospect:/m);
    expect(run.code).toBe(0);
    // The FIFO first: a run that replaced it left the reader nothing to wait for, so this fails at once.
    expect((await stat(fifo)).isFIFO()).toBe(true);
    expect((await readdir(dir)).sort()).toEqual(['rows', 'run.json']);
    expect(await received).toBe(reference);
    expect(JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'))).toMatchObject({ exit_code: 0, rows: 5 });
  });

  it('pipeline --state -o FIFO: the published rows reach the reader; the FIFO stays', async () => {
    const dir = await scratchDir();
    const fifo = join(dir, 'leads');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const args = ['pipeline', '-t', 'Shopify', '--country', 'us', '--max', '20'];
    // The reference in process; the run into the FIFO is spawned.
    const plain = await runInProcess(args, { url: sandbox.url, apiKey: KEY, cwd: dir });
    expect(plain.code).toBe(0);
    const received = readAll(fifo);
    const run = await runCli([...args, '--state', 'state', '-o', fifo], { url: sandbox.url, apiKey: KEY, cwd: dir });
    expect(run.code).toBe(0);
    expect((await stat(fifo)).isFIFO()).toBe(true);
    expect(await temps(dir)).toEqual([]);
    expect(await received).toBe(plain.stdout);
    expect(existsSync(`${fifo}.meta.json`)).toBe(false);
  });

  it.skipIf(!IS_ROOT)(
    'as root, a character device (a private node of /dev/null) is written, not replaced (in process)',
    async () => {
      const dir = await scratchDir();
      const device = join(dir, 'null');
      expect(spawnSync('mknod', [device, 'c', '1', '3']).status).toBe(0);
      const before = await stat(device);
      const run = await runInProcess([...COMPANIES, '-o', device, '--summary', device], {
        url: sandbox.url,
        apiKey: KEY,
      });
      expect(run.code).toBe(0);
      expect(run.stdout).toBe('');
      const after = await stat(device);
      expect(after.isCharacterDevice()).toBe(true);
      expect([after.ino, after.rdev]).toEqual([before.ino, before.rdev]);
      expect(await readdir(dir)).toEqual(['null']);
    },
  );

  describe.skipIf(IS_ROOT && SETPRIV.skip)('as a user who may not write /dev', () => {
    /**
     * What nobody runs: the launcher, the bundle and package.json, copied to a folder of the system's
     * temporary directory that everyone may read, since the clone may sit in a folder only root can
     * (a 0700 temporary directory). The bundle needs nothing else of node_modules for these runs.
     */
    let copy: string | undefined;
    beforeAll(async () => {
      if (!IS_ROOT) return;
      copy = await mkdtemp(join(tmpdir(), 'prospect-as-nobody-'));
      const root = resolve(import.meta.dirname, '../..');
      for (const part of ['bin', 'package.json', 'dist/cli'])
        await cp(join(root, part), join(copy, part), { recursive: true });
      spawnSync('chmod', ['-R', 'a+rX', copy]);
    });
    afterAll(async () => {
      if (copy !== undefined) await rm(copy, { recursive: true, force: true });
    });

    /** The run as nobody when the tests run as root (the copy above); as the user running them otherwise. */
    const asUser = (): Partial<CliOptions> => ({
      env: { PROSPECT_CONFIG_DIR: '/nonexistent/prospect-config', PROSPECT_CACHE_DIR: '/nonexistent/prospect-cache' },
      ...(IS_ROOT
        ? {
            wrap: (args: string[]) => ({
              command: SETPRIV.command,
              // args[0] is bin/prospect.js of the clone: nobody runs the copy's.
              args: [
                '--reuid=nobody',
                '--regid=nogroup',
                '--clear-groups',
                process.execPath,
                join(copy!, 'bin', 'prospect.js'),
                ...args.slice(1),
              ],
            }),
          }
        : {}),
    });

    it('-o /dev/null --summary /dev/stdout: exit 0, the record on stdout, /dev/null still the device', async () => {
      const before = await stat('/dev/null');
      const run = await runCli([...COMPANIES, '-o', '/dev/null', '--summary', '/dev/stdout'], {
        url: sandbox.url,
        apiKey: KEY,
        ...asUser(),
      });
      expect(run.stderr).not.toMatch(/^prospect:/m);
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({
        command: 'companies',
        rows: 5,
        exit_code: 0,
        output: '/dev/null',
      });
      const after = await stat('/dev/null');
      expect(after.isCharacterDevice()).toBe(true);
      expect(after.rdev).toBe(before.rdev);
    });

    it('-o /dev/stdout: the right bytes', async () => {
      const run = await runCli([...COMPANIES, '-o', '/dev/stdout'], { url: sandbox.url, apiKey: KEY, ...asUser() });
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(reference);
    });
  });
});

describe('a read-only output is kept', () => {
  it.each([
    { name: 'companies -o (spawned)', args: COMPANIES, file: 'out.csv', spawned: true },
    {
      name: 'pipeline --state -o (in process)',
      args: ['pipeline', '-t', 'Shopify', '--max', '5', '--state', 'state'],
      file: 'out.csv',
      spawned: false,
    },
    { name: "companies -o's sidecar (in process)", args: COMPANIES, file: 'out.csv.meta.json', spawned: false },
  ])('$name onto a 0444 file: exit 7 before any call, the file as it was', async ({ args, file, spawned }) => {
    const dir = await scratchDir();
    const path = join(dir, file);
    await writeFile(path, 'last week\n');
    await chmod(path, 0o444);
    const before = await requests();
    const inDir = args.map((arg) => (arg === 'state' ? join(dir, 'state') : arg));
    const run = spawned
      ? await runCli([...args, '-o', 'out.csv'], { url: sandbox.url, apiKey: KEY, cwd: dir })
      : await runInProcess([...inDir, '-o', join(dir, 'out.csv')], { url: sandbox.url, apiKey: KEY });
    expect(run.code).toBe(7);
    expect(run.stderr).toMatch(
      new RegExp(`^prospect: cannot write .*${file.replaceAll('.', '\\.')}: the file is read-only \\(mode 0444\\)`),
    );
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(2);
    expect(await requests()).toBe(before);
    expect(await readFile(path, 'utf8')).toBe('last week\n');
    expect((await stat(path)).mode & 0o777).toBe(0o444);
    expect(await temps(dir)).toEqual([]);
  });
});

describe('--bom: a UTF-8 byte-order mark for Excel on Windows', () => {
  it('companies --bom -o FILE.csv (in process): the mark, then the bytes of a run without it', async () => {
    const dir = await scratchDir();
    const run = await runInProcess([...COMPANIES, '--bom', '-o', 'excel.csv'], {
      url: sandbox.url,
      apiKey: KEY,
      cwd: dir,
    });
    expect(run.code).toBe(0);
    const bytes = await readFile(join(dir, 'excel.csv'));
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.subarray(3).toString('utf8')).toBe(reference);
  });

  it('--bom with a format that is not CSV: exit 2 before any call', async () => {
    const before = await requests();
    // In process: a usage error before any call (test/commands/options.test.ts spawns those).
    const run = await runInProcess([...COMPANIES, '--bom', '--format', 'ndjson'], { url: sandbox.url, apiKey: KEY });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^prospect: --bom is for CSV, and this run writes ndjson\./);
    expect(await requests()).toBe(before);
  });
});

describe('the mode of what the person asked for: 0666 less the umask, with or without --state', () => {
  // 002: the usual 022 would give 0644, and a file made private (0600, as --state used to) would fail it too.
  it.each(['002'])('umask %s', async (umask) => {
    const dir = await scratchDir();
    const expected = 0o666 & ~Number.parseInt(umask, 8);
    const run = await runShell(
      `umask ${umask}; eval "$PROSPECT ${COMPANIES.join(' ')} -o plain.csv --summary plain.json" && eval "$PROSPECT pipeline -t Shopify --country us --max 20 --state state -o leads.csv"`,
      { url: sandbox.url, apiKey: KEY, cwd: dir },
    );
    expect(run.code).toBe(0);
    for (const name of ['plain.csv', 'plain.csv.meta.json', 'plain.json', 'leads.csv', 'leads.csv.meta.json']) {
      expect([name, (await stat(join(dir, name))).mode & 0o777]).toEqual([name, expected]);
    }
    expect((await stat(join(dir, 'state'))).mode & 0o777).toBe(0o700);
  });
});

/** Everything a reader of `path` receives (a FIFO: opening it waits for the writer). */
/**
 * What a reader of the FIFO gets. The reader is `cat`, a process: should the run replace the FIFO
 * instead of writing into it, the reader is left waiting on an inode nobody opens, and the file's
 * clean-up ends it, where an open() in this process would hold a thread until the worker dies.
 */
function readAll(path: string): Promise<string> {
  return new Promise((resolveText, reject) => {
    const reader = spawn('cat', [path], { stdio: ['ignore', 'pipe', 'inherit'] });
    const chunks: Buffer[] = [];
    reader.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    reader.on('error', reject);
    reader.on('close', () => resolveText(Buffer.concat(chunks).toString('utf8')));
  });
}
