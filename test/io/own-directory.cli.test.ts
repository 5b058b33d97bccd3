/**
 * Trust only your own directories (issue 41.7): a config, state or cache directory another user could
 * write stops the run with exit 2 before any request. In process where the owner or mode is what
 * differs (the test runs as root, so a directory chowned to nobody is another user's); spawned as
 * nobody (setpriv) for a parent another user owns and may write, and for a lock held by another user's
 * live process (EPERM from kill(pid, 0) means alive, issue 44.4), which only a second user shows.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir } from '../helpers/cli.js';
import { findProgram } from '../helpers/programs.js';
import { companiesPage, startScriptedServer, type ScriptedServer } from '../helpers/scripted-server.js';

const KEY = 'sk_live_own_directory_key_c0de';
const IS_ROOT = process.geteuid?.() === 0;
const NOBODY = 65534;
const SETPRIV = findProgram('setpriv');

let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedServer([{ body: companiesPage(['acme.com'], null) }]);
});
afterAll(() => server.close());
afterEach(() => {
  server.requests.length = 0;
});

describe.skipIf(!IS_ROOT)('another user could write it: exit 2 before any request (in process, as root)', () => {
  it('a PROSPECT_CONFIG_DIR of another user with a planted base-url gets no request, and no key', async () => {
    const config = join(await scratchDir(), 'planted');
    mkdirSync(config, { mode: 0o700 });
    writeFileSync(join(config, 'config.json'), JSON.stringify({ 'base-url': server.url }), { mode: 0o600 });
    chownSync(config, NOBODY, NOBODY);
    const run = await runInProcess(['companies', '-t', 'Shopify', '--format', 'csv'], {
      apiKey: KEY,
      env: { PROSPECT_CONFIG_DIR: config },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`prospect: the config directory ${config} is owned by another user (uid 65534`);
    expect(run.stderr).toContain(`chown 0 ${config}`);
    expect(server.requests).toHaveLength(0);
  });

  it('config set api-key writes no key into a config directory another user owns', async () => {
    const config = join(await scratchDir(), 'theirs');
    mkdirSync(config, { mode: 0o700 });
    chownSync(config, NOBODY, NOBODY);
    const run = await runInProcess(['config', 'set', 'api-key'], { input: KEY, env: { PROSPECT_CONFIG_DIR: config } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`the config directory ${config} is owned by another user`);
    expect(readdirSync(config)).toEqual([]);
  });

  it('a config file others may write (in a directory they can reach) is refused the same way', async () => {
    const config = join(await scratchDir(), 'config');
    mkdirSync(config, { mode: 0o755 });
    writeFileSync(join(config, 'config.json'), JSON.stringify({ 'base-url': server.url }));
    chmodSync(join(config, 'config.json'), 0o646);
    const run = await runInProcess(['companies', '-t', 'Shopify'], {
      apiKey: KEY,
      env: { PROSPECT_CONFIG_DIR: config },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `${join(config, 'config.json')} in the config directory ${config} is writable by other users`,
    );
    expect(server.requests).toHaveLength(0);
  });

  it('--state in a directory others may write: exit 2 naming it and the chmod, nothing asked', async () => {
    const state = join(await scratchDir(), 'state');
    mkdirSync(state, { mode: 0o700 });
    chmodSync(state, 0o777);
    const run = await runInProcess(
      ['pipeline', '-t', 'Shopify', '--state', state, '-o', join(state, '..', 'out.csv')],
      {
        apiKey: KEY,
        url: server.url,
      },
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`prospect: --state ${state} is writable by other users (mode 0777)`);
    expect(run.stderr).toContain(`Run chmod go-w ${state}`);
    expect(server.requests).toHaveLength(0);
  });

  it('a cache directory (PROSPECT_CACHE_DIR) of another user: verify pays nothing', async () => {
    const cache = join(await scratchDir(), 'cache');
    mkdirSync(cache, { mode: 0o700 });
    chownSync(cache, NOBODY, NOBODY);
    const run = await runInProcess(['verify', 'ada@acme.com', '--yes', '--format', 'csv'], {
      apiKey: KEY,
      url: server.url,
      env: { PROSPECT_CACHE_DIR: cache },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `prospect: the verification cache ${cache} (PROSPECT_CACHE_DIR) is owned by another user`,
    );
    expect(server.requests).toHaveLength(0);
  });
});

describe.skipIf(!IS_ROOT || SETPRIV.skip)('as nobody (setpriv)', () => {
  /** What nobody runs: a copy of the launcher and bundle (and dist/io) in a folder everyone may read. */
  let copy: string;
  /** A folder of root's, mode 0777 and not sticky: anyone may rename what is in it. */
  let shared: string;
  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), 'prospect-own-dir-'));
    const root = resolve(import.meta.dirname, '../..');
    for (const part of ['bin', 'package.json', 'dist/cli', 'dist/io'])
      cpSync(join(root, part), join(copy, part), { recursive: true });
    // The pipeline loads better-sqlite3, a native module: the clone's, through a link.
    symlinkSync(realpathSync(join(root, 'node_modules')), join(copy, 'node_modules'));
    shared = join(copy, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    spawnSync('chmod', ['-R', 'a+rX', copy]);
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  const asNobody = (args: string[]) => ({
    command: SETPRIV.command,
    args: ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, ...args],
  });

  it("--state of nobody's own in root's 0777 folder: exit 2 naming the parent, nothing asked", async () => {
    const state = join(shared, 'state');
    const run = await runCli(['pipeline', '-t', 'Shopify', '--state', state, '--format', 'csv'], {
      apiKey: KEY,
      url: server.url,
      env: { PROSPECT_CONFIG_DIR: '/nonexistent/prospect-config', PROSPECT_CACHE_DIR: '/nonexistent/prospect-cache' },
      wrap: (args) => asNobody([join(copy, 'bin', 'prospect.js'), ...args.slice(1)]),
    });
    expect(run.stderr).toContain(
      `prospect: the parent ${shared} of --state ${state} is writable by other users (mode 0777)`,
    );
    expect(run.code).toBe(2);
    expect(server.requests).toHaveLength(0);
  });

  it('a live process of another user (this root test) is held, not gone: kill(pid, 0) says EPERM', () => {
    const script =
      `const m = await import(${JSON.stringify(join(copy, 'dist/io/pid-file.js'))});` +
      `process.stdout.write(JSON.stringify({ uid: process.getuid(), gone: m.holderIsGone({ pid: ${process.pid}, host: ${JSON.stringify(hostname())} }) }));`;
    const run = spawnSync(SETPRIV.command, asNobody(['--input-type=module', '-e', script]).args, { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ uid: NOBODY, gone: false });
  });
});
