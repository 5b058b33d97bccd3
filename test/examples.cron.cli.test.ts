/**
 * The README's crontab as cron runs it: `/bin/sh -c` with nothing of the user's environment but
 * `PATH=/usr/bin:/bin` and `HOME` (`env -i`), prospect installed into a prefix of its own as
 * `npm install -g` does (a link to this clone, offline: no registry is asked), the key and the service
 * address in the config file under HOME. Without the crontab's PATH line the job fails as the README
 * says (`prospect: not found`, exit 127); with the line the README's `echo "PATH=…"` prints, it runs,
 * silent on both streams, and leaves the leads file and a summary of exit 0.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess, runShell, scratchDir } from './helpers/cli.js';
import { SANDBOX_KEYS, startTestSandbox, todayUtc, type RunningSandbox } from './helpers/sandbox.js';

const ROOT = resolve(import.meta.dirname, '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const KEY = SANDBOX_KEYS.growth;
const CRON_PATH = 'PATH=/usr/bin:/bin';

/** The README's crontab: its environment lines and its job's command (schedule gone, `\%` → `%`, as cron does). */
function readmeCrontab(): { environment: string[]; command: string } {
  const block = /```cron\n([\s\S]*?)```/.exec(README)?.[1] ?? '';
  const lines = block.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
  const environment = lines.filter((line) => /^[A-Z_]+=/.test(line));
  const jobs = lines.filter((line) => !/^[A-Z_]+=/.test(line)).map((line) => /^(?:\S+\s+){5}(.+)$/.exec(line)?.[1]);
  expect(jobs).toHaveLength(1);
  return { environment, command: jobs[0]!.replace(/\\%/g, '%') };
}

/** The README's command that prints the crontab's PATH line. */
function readmePathCommand(): string {
  const line = README.split('\n').find((text) => text.trim().startsWith('echo "PATH='));
  expect(line, 'README: the echo "PATH=…" line').toBeDefined();
  return line!.trim();
}

let sandbox: RunningSandbox;
let home: string;
let prefix: string;
/** The user's shell PATH: the prefix's bin and a directory with node, as after `npm install -g` under nvm. */
let userPath: string;

beforeAll(async () => {
  sandbox = await startTestSandbox({ seed: 1, companies: 5_000, asOf: todayUtc() });
  const dir = await scratchDir();
  home = join(dir, 'home');
  prefix = join(dir, 'prefix');
  mkdirSync(join(home, 'leads'), { recursive: true });
  const nodeDir = join(dir, 'node-bin');
  mkdirSync(nodeDir);
  symlinkSync(process.execPath, join(nodeDir, 'node'));
  // npm's own global install of this clone: a link, its bin on the prefix, no network (--offline).
  const install = spawnSync(
    'npm',
    ['install', '-g', '--prefix', prefix, ROOT, '--offline', '--ignore-scripts', '--no-audit', '--no-fund'],
    { encoding: 'utf8', env: { ...process.env, npm_config_loglevel: 'error' } },
  );
  expect(install.status, install.stderr).toBe(0);
  expect(existsSync(join(prefix, 'bin', 'prospect'))).toBe(true);
  userPath = `${join(prefix, 'bin')}:${nodeDir}:/usr/bin:/bin`;
  // The key and the service, set once by the user as the README says; read under HOME by the job. Set-up,
  // so in process: a thread has the test process's home directory, so the XDG location under HOME is named.
  const userEnv = { HOME: home, PROSPECT_CONFIG_DIR: undefined, XDG_CONFIG_HOME: join(home, '.config') };
  expect((await runInProcess(['config', 'set', 'base-url', sandbox.url], { env: userEnv })).code).toBe(0);
  const setKey = await runInProcess(['config', 'set', 'api-key'], { env: userEnv, input: `${KEY}\n`, apiKey: KEY });
  expect(setKey.code).toBe(0);
}, 120_000);
afterAll(async () => {
  await sandbox?.close();
});

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** `env -i NAME=… /bin/sh -c COMMAND`, as cron starts a job (through runShell: the sandbox in this process keeps answering). */
function asCron(environment: string[], command: string) {
  const variables = [`HOME=${home}`, 'LOGNAME=prospect', 'SHELL=/bin/sh', ...environment].map(shellQuote).join(' ');
  return runShell(`env -i ${variables} /bin/sh -c ${shellQuote(command)}`, {
    cwd: join(home, 'leads'),
    timeoutMs: 120_000,
    apiKey: KEY,
  });
}

describe("the README's crontab under cron's environment", () => {
  it('without its PATH line: prospect is not found (exit 127), as the README says', async () => {
    const { command } = readmeCrontab();
    const run = await asCron([CRON_PATH], command);
    expect(run.code).toBe(127);
    expect(run.stderr).toMatch(/prospect: (command )?not found/);
    expect(readmeCrontab().environment.some((line) => line.startsWith('PATH='))).toBe(true);
    expect(README).toContain('`prospect: not found` (exit 127)');
  });

  it("with the PATH line the README's echo prints: the job runs, silent, and writes the leads and an exit-0 summary", async () => {
    const printed = await runShell(readmePathCommand(), { env: { PATH: userPath } });
    expect(printed.code).toBe(0);
    const pathLine = printed.stdout.trim();
    expect(pathLine).toBe(
      `PATH=${join(prefix, 'bin')}:${dirname(join(userPath.split(':')[1]!, 'node'))}:/usr/bin:/bin`,
    );

    const { command } = readmeCrontab();
    const run = await asCron([pathLine], command);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('');
    expect(run.code).toBe(0);
    const leads = readdirSync(join(home, 'leads')).filter((name) => /^leads-\d{4}-\d{2}-\d{2}\.csv$/.test(name));
    expect(leads).toHaveLength(1);
    expect(readFileSync(join(home, 'leads', leads[0]!), 'utf8').split('\n').length).toBeGreaterThan(2);
    const summary = JSON.parse(readFileSync(join(home, 'leads', 'last-run.json'), 'utf8'));
    expect(summary).toMatchObject({ command: 'pipeline', exit_code: 0 });
    expect(summary.rows).toBeGreaterThan(0);
  }, 120_000);
});
