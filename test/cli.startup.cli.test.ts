/**
 * The start-up rule (README "Start-up"): what `prospect --version` and `prospect companies --help` load is
 * an allow-list. The built binary runs under a module hook that logs each file it loads; each file of the
 * bundle is mapped back to the src/ modules and packages in it (dist/cli/modules.json, written by
 * scripts/bundle.mjs). A heavy package (zod, undici, csv-stringify, better-sqlite3, pg, exceljs, ora…)
 * or a module outside the list on this path fails here, with the list of what came in.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli, scratchDir } from './helpers/cli.js';

const DIST_CLI = resolve(import.meta.dirname, '../dist/cli');
const HOOK = pathToFileURL(resolve(import.meta.dirname, 'helpers/module-log.mjs')).href;

/**
 * The packages a start may load: the argument parser that prints the help, and string-width (with its
 * four small dependencies), which measures help and stderr lines for wrapping at a terminal's width.
 */
const START_PACKAGES = [
  'ansi-regex',
  'commander',
  'emoji-regex',
  'is-fullwidth-code-point',
  'string-width',
  'strip-ansi',
];

/**
 * The src/ modules a start may load: the command tree and flag table, and the small leaves they name
 * (limits, retry defaults, config keys, exit codes, the reporter). Add to it only what is as light.
 */
const START_MODULES = new Set([
  'src/cli.ts',
  'src/package.ts',
  'src/exit-codes.ts',
  'src/exit-code-table.ts',
  'src/errors.ts',
  ...[
    'command-tree',
    'companies',
    'completion',
    'config',
    'contacts',
    'count',
    'doctor',
    'forget',
    'help',
    'pipeline',
    'provenance',
    'sandbox',
    'state',
    'verify',
  ].map((name) => `src/commands/${name}.ts`),
  ...['command-flags', 'flag', 'flags', 'values'].map((name) => `src/options/${name}.ts`),
  ...['keys', 'paths', 'precedence'].map((name) => `src/config/${name}.ts`),
  'src/runtime/context.ts',
  // keyHint only; the connection itself is resolved through dynamic imports.
  'src/runtime/connection.ts',
  'src/io/broken-pipe.ts',
  'src/io/temp-files.ts',
  ...['format-count', 'reporter', 'terminal-size', 'wrap'].map((name) => `src/ui/${name}.ts`),
  ...['contract', 'errors', 'limits', 'retry'].map((name) => `src/api/${name}.ts`),
  ...['display-safe', 'redact', 'streams', 'text'].map((name) => `src/util/${name}.ts`),
]);

/** The packages and src/ modules one run of the binary loaded. */
async function loadedBy(
  args: string[],
  exitCode = 0,
): Promise<{ packages: string[]; modules: string[]; stdout: string; stderr: string }> {
  const log = join(await scratchDir('prospect-startup-'), 'modules.log');
  const run = await runCli(args, {
    env: { PROSPECT_TEST_MODULE_LOG: log },
    wrap: (argv) => ({ command: process.execPath, args: ['--import', HOOK, ...argv] }),
  });
  expect(run.code, run.stderr).toBe(exitCode);
  const bundled = JSON.parse(readFileSync(join(DIST_CLI, 'modules.json'), 'utf8')) as Record<string, string[]>;
  const packages = new Set<string>();
  const modules = new Set<string>();
  const add = (path: string): void => {
    const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    if (inPackage) packages.add(inPackage[1]!);
    else if (path.startsWith('src/')) modules.add(path);
  };
  for (const url of readFileSync(log, 'utf8').trim().split('\n')) {
    if (!url.startsWith('file:')) continue; // node: built-ins
    const path = new URL(url).pathname;
    if (path.startsWith(`${DIST_CLI}/`)) {
      const inputs = bundled[path.slice(DIST_CLI.length + 1)];
      expect(inputs, `${path} is not in dist/cli/modules.json: rebuild`).toBeDefined();
      inputs!.forEach(add);
    } else add(path);
  }
  return { packages: [...packages].sort(), modules: [...modules].sort(), stdout: run.stdout, stderr: run.stderr };
}

describe('start-up loads only the allow-list (spawned, under a module-logging hook)', () => {
  for (const args of [['--version'], ['companies', '--help']]) {
    it(`prospect ${args.join(' ')}`, async () => {
      const { packages, modules, stdout } = await loadedBy(args);
      expect(stdout.length).toBeGreaterThan(0);
      expect(packages).toEqual(START_PACKAGES);
      expect(modules.filter((module) => !START_MODULES.has(module))).toEqual([]);
      // The sandbox is apart (issue 44): its command's definition loads only when it is needed.
      expect(modules.filter((module) => module.startsWith('src/sandbox/'))).toEqual([]);
      expect(modules).not.toContain('src/commands/sandbox-command.ts');
      // The log is real: the entry and the flag table were seen.
      expect(modules).toContain('src/cli.ts');
      expect(modules).toContain('src/options/flags.ts');
    });
  }
});

describe('a held --state is refused before the job loads (issue 43: exit 6 as fast as --version)', () => {
  it('prospect pipeline --state DIR, held by a live run: exit 6 naming it, before any module of the job', async () => {
    const state = await scratchDir('prospect-held-');
    // This test's own process is the live holder, on this host.
    const holder = { pid: process.pid, host: hostname(), started_at: '2026-12-01T03:00:00.000Z', command: 'pipeline' };
    writeFileSync(join(state, 'lock'), JSON.stringify(holder));
    const { packages, modules, stderr } = await loadedBy(
      ['pipeline', '-t', 'Shopify', '--state', state, '-o', join(state, 'leads.csv')],
      6,
    );
    expect(stderr).toContain(`another pipeline run (pid ${process.pid}, started 2026-12-01T03:00:00.000Z)`);
    // The lock was read by the light module alone: nothing of the job, its state or its network.
    expect(modules).toContain('src/core/state-store/lock.ts');
    expect(modules.filter((module) => /^src\/core\/(pipeline|verification|shared)\//.test(module))).toEqual([]);
    expect(packages.filter((name) => ['undici', 'better-sqlite3', 'pg', 'exceljs', 'ora'].includes(name))).toEqual([]);
  });
});
