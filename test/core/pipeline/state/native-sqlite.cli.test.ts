/**
 * Issue 26, point 10: an install whose better-sqlite3 has no binary (`npm install --ignore-scripts`)
 * says so in one line with the repair, exit 1 (src/exit-codes.ts: a broken install), before any
 * request; not a stack of internal-error lines. The broken install is made here: a copy of the built
 * package whose node_modules links every dependency but better-sqlite3, copied without its build/.
 */
import { cp, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, scratchDir } from '../../../helpers/cli.js';
import { sandboxStats } from '../../../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../../../helpers/sandbox.js';

const ROOT = resolve(import.meta.dirname, '../../../..');
let sandbox: RunningSandbox;
let install: string;

/** The package as npm would install it with scripts off: better-sqlite3's JavaScript, no compiled binary. */
async function installWithoutScripts(): Promise<string> {
  const dir = join(await scratchDir(), 'prospect-cli');
  for (const entry of ['package.json', 'bin', 'dist'])
    await cp(join(ROOT, entry), join(dir, entry), { recursive: true });
  await mkdir(join(dir, 'node_modules'));
  for (const name of await readdir(join(ROOT, 'node_modules'))) {
    if (name === 'better-sqlite3' || name === '.bin') continue;
    await symlink(join(ROOT, 'node_modules', name), join(dir, 'node_modules', name));
  }
  const sqlite = join(ROOT, 'node_modules', 'better-sqlite3');
  for (const entry of ['package.json', 'lib'])
    await cp(join(sqlite, entry), join(dir, 'node_modules', 'better-sqlite3', entry), { recursive: true });
  return dir;
}

beforeAll(async () => {
  sandbox = await startTestSandbox();
  install = await installWithoutScripts();
});
afterAll(async () => {
  await sandbox?.close();
});

describe('an install that cannot load the native module', () => {
  it('pipeline --state: one line that says how to repair it, exit 1 (in --summary too), before any request', async () => {
    const dir = await scratchDir();
    // Last week's record of a success: the failed run must replace it.
    const summary = join(dir, 'run.json');
    await writeFile(summary, '{"command":"pipeline","exit_code":0}\n');
    const before = (await sandboxStats(sandbox.url)).requests.total;
    const run = await runCli(
      [
        'pipeline',
        '-t',
        'Shopify',
        '--max',
        '2',
        '--state',
        join(dir, 'state'),
        '-o',
        join(dir, 'leads.csv'),
        '--summary',
        summary,
      ],
      {
        url: sandbox.url,
        apiKey: SANDBOX_KEYS.growth,
        wrap: (argv) => ({ command: process.execPath, args: [join(install, 'bin', 'prospect.js'), ...argv.slice(1)] }),
      },
    );
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(
      'prospect: the native module better-sqlite3, which --state needs, does not load (Could not locate the bindings file); nothing was sent.',
    );
    expect(lines[1]).toBe(
      `Repair the install: cd ${install} && npm rebuild better-sqlite3 (an install with --ignore-scripts skips its build).`,
    );
    expect(run.stderr).not.toMatch(/internal error|This is a bug/);
    expect((await sandboxStats(sandbox.url)).requests.total).toBe(before);
    expect(JSON.parse(await readFile(summary, 'utf8'))).toMatchObject({
      command: 'pipeline',
      rows: 0,
      exit_code: 1,
      error: expect.stringContaining('better-sqlite3'),
    });
  });

  it('a run without --state does not need it', async () => {
    const run = await runCli(['companies', '-t', 'Shopify', '--max', '2', '--format', 'csv'], {
      url: sandbox.url,
      apiKey: SANDBOX_KEYS.growth,
      wrap: (argv) => ({ command: process.execPath, args: [join(install, 'bin', 'prospect.js'), ...argv.slice(1)] }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim().split('\n')).toHaveLength(3);
  });
});
