import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishCli, runInProcess, runShell, scratchDir, startCli } from '../helpers/cli.js';
import { SANDBOX_KEYS, startTestSandbox, todayUtc, type RunningSandbox } from '../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
let slow: RunningSandbox;
let fast: RunningSandbox;
let domains: string;
let emails: string;

beforeAll(async () => {
  slow = await startTestSandbox({ seed: 3, companies: 20_000, asOf: todayUtc(), latencyMs: 250 });
  fast = await startTestSandbox({ seed: 3, companies: 20_000, asOf: todayUtc() });
  // The contacts runs' input, made in process: not under test here.
  const companies = await runInProcess(['companies', '-t', 'jQuery', '--max', '400', '--columns', 'domain'], {
    url: fast.url,
    apiKey: KEY,
  });
  domains = companies.stdout;
  emails = Array.from({ length: 300 }, (_, index) => `someone${index}@example${index}.com`).join('\n');
});
afterAll(async () => {
  await slow?.close();
  await fast?.close();
});

/** Each data command, with enough work to still be running when the signal comes. */
const COMMANDS: Array<{ name: string; args: (out: string) => string[]; input?: () => string }> = [
  { name: 'companies', args: (out) => ['--page-size', '50', 'companies', '-t', 'jQuery', '-o', out] },
  { name: 'contacts', args: (out) => ['contacts', '--limit', '20', '-o', out], input: () => domains },
  {
    name: 'verify',
    args: (out) => ['verify', '--yes', '--concurrency', '1', '--no-cache', '-o', out],
    input: () => emails,
  },
  { name: 'pipeline', args: (out) => ['--page-size', '50', 'pipeline', '-t', 'jQuery', '-o', out] },
];

async function interrupt(command: (typeof COMMANDS)[number], signal: NodeJS.Signals) {
  const dir = await scratchDir();
  const out = join(dir, 'out.csv');
  await writeFile(out, 'previous\n');
  const child = startCli(command.args(out), { url: slow.url, apiKey: KEY, cwd: dir });
  child.stdin!.end(command.input?.() ?? '');
  const finished = finishCli(child, { apiKey: KEY, cwd: dir });
  // Wait until the run has its temp file open: it is mid-export.
  for (let waited = 0; waited < 20_000 && (await readdir(dir)).length < 2 && child.exitCode === null; waited += 25)
    await sleep(25);
  await sleep(300);
  child.kill(signal);
  return { run: await finished, dir, out };
}

describe.each(COMMANDS)('$name under signals and pipes', (command) => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    '%s exits %i, leaves the old file as it was and no temp file',
    async (signal, code) => {
      const { run, dir } = await interrupt(command, signal);
      expect(run.code).toBe(code);
      expect(run.stderr).toMatch(/interrupted/);
      expect(run.stderr).not.toMatch(/\n\s+at /);
      expect(await readdir(dir)).toEqual(['out.csv']);
    },
    60_000,
  );

  it('| head -1 ends quietly with exit 0 and nothing on stderr', async () => {
    const args = command.args('-').filter((arg, index, all) => arg !== '-o' && all[index - 1] !== '-o' && arg !== '-');
    const input = command.input?.() ?? '';
    const run = await runShell(`eval "$PROSPECT ${args.map((arg) => `'${arg}'`).join(' ')}" | head -1`, {
      url: fast.url,
      apiKey: KEY,
      input,
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout.split('\n')[0]).toMatch(/^[a-z_]+,/);
  }, 60_000);
});

// The sandbox stopping on SIGINT and SIGTERM (exit 0, its URL first on stdout) is
// test/commands/sandbox.test.ts's, which spawns it for each signal.
