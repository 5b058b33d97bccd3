/**
 * Every command in README.md and in every `--help` example runs as written against the sandbox's
 * default dataset: the domains and addresses they name exist, their flags are real, and they exit 0
 * with output. The commands are read from the README's sh and cron blocks and from the built
 * binary's --help (what a user copies), never listed here.
 *
 * How they run: in one scratch directory (with a HOME of its own), in document order, in bash, with
 * `prospect` (and `npx prospect`) on the PATH a command that hands its argv, environment, directory
 * and stdin to main() in this process (inProcessCommand): bash parses each line as written, and each
 * prospect in it exits with main()'s code. The README's first chain of one prospect into another runs
 * the built binary instead (two processes and a pipe), and so does `prospect sandbox` (it serves until
 * stopped). An example that is one plain `[npx] prospect …` (perhaps after `NAME=value`) needs no
 * shell: main() gets the words bash makes of it (see inProcess). A line shown twice in one lane runs once. `--sandbox` is dropped and
 * PROSPECT_BASE_URL / PROSPECT_API_KEY name one shared sandbox of the default dataset instead, so the
 * dataset is built once; a `companies` listing or a `pipeline` without --max gets `--max 20` (see asRun). The user's
 * own files that examples read (accounts.csv, accounts.txt, domains.txt, and the exclusion lists
 * customers.csv and do-not-contact.csv, shaped as CRM exports) are the ones shipped in examples/;
 * every example that pays states its cap.
 */
import { execFile, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_CODE_DOCS } from '../src/exit-codes.js';
import {
  inProcessCommand,
  PROSPECT_COMMAND,
  runInProcess,
  runShell,
  scratchDir,
  type InProcessCommand,
} from './helpers/cli.js';
import { findProgram } from './helpers/programs.js';
import { DEFAULT_COMPANIES, DEFAULT_SEED } from '../src/sandbox/defaults.js';
import { SANDBOX_KEYS, startTestSandbox, todayUtc, type RunningSandbox } from './helpers/sandbox.js';

const execFileAsync = promisify(execFile);
const README = readFileSync(resolve(import.meta.dirname, '../README.md'), 'utf8');
const EXAMPLES = resolve(import.meta.dirname, '../examples');
const KEY = SANDBOX_KEYS.growth;
/** README lines that are not prospect commands: they install, build or test the clone itself. */
const SETUP_LINES = new Set(['npm ci', 'npm test', 'npm link', 'npm i -g .']);
/** A line that pipes one prospect into another. */
const PIPED = /\bprospect\b[^|]*\|\s*(?:npx\s+)?prospect\b/;
const DATA_COMMANDS = /\bprospect\s+(?:--\S+\s+)*(companies|contacts|verify|pipeline)\b/;

interface Example {
  where: string;
  command: string;
}

/** `a \` + newline + `b` → one line; comment-only lines go. */
function commandLines(text: string): string[] {
  return text
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** A crontab line's command: the five schedule fields go, and cron's `\%` is a `%`. */
function cronCommand(line: string): string | undefined {
  const match = /^(?:[\d*/,-]+\s+){5}(.+)$/.exec(line);
  return match?.[1]?.replace(/\\%/g, '%');
}

function readmeExamples(): Example[] {
  const examples: Example[] = [];
  for (const block of README.matchAll(/```(sh|cron)\n([\s\S]*?)```/g)) {
    for (const line of commandLines(block[2]!)) {
      // A crontab's environment line (PATH=…) is cron's, not a command: test/examples.cron.cli.test.ts runs it.
      if (block[1] === 'cron' && /^[A-Z_]+=/.test(line)) continue;
      const command = block[1] === 'cron' ? cronCommand(line) : line;
      expect(command, `README cron line: ${line}`).toBeDefined();
      if (!SETUP_LINES.has(command!)) examples.push({ where: 'README.md', command: command! });
    }
  }
  return examples;
}

/** The lines under "Examples:" of one --help: `$ command`, or a crontab line. */
function helpExamples(where: string, help: string): Example[] {
  const section = /\nExamples:\n([\s\S]*)$/.exec(help)?.[1] ?? '';
  const examples: Example[] = [];
  for (const line of commandLines(section)) {
    const command = line.startsWith('$ ') ? line.slice(2) : cronCommand(line);
    if (command !== undefined) examples.push({ where, command });
  }
  return examples;
}

/**
 * Every command and subcommand of `prospect --help`, with the examples of each. The help texts are
 * read in process (the same main(); test/commands/help.test.ts spawns --help): the examples are what is run here.
 */
async function allHelpExamples(): Promise<Example[]> {
  const commandsOf = (help: string) =>
    [...(/\nCommands:\n([\s\S]*?)(?:\n\n|$)/.exec(help)?.[1] ?? '').matchAll(/^ {2}(\S+)/gm)]
      .map((m) => m[1]!)
      .filter((name) => name !== 'help');
  const helpOf = async (path: string[]) => {
    const help = await runInProcess([...path, '--help']);
    expect(help.code, `prospect ${path.join(' ')} --help`).toBe(0);
    return help.stdout;
  };
  const top = await helpOf([]);
  const examples = helpExamples('prospect --help', top);
  for (const name of [...commandsOf(top), 'help']) {
    const help = await helpOf([name]);
    examples.push(...helpExamples(`prospect ${name} --help`, help));
    for (const sub of name === 'help' ? [] : commandsOf(help))
      examples.push(...helpExamples(`prospect ${name} ${sub} --help`, await helpOf([name, sub])));
  }
  return examples;
}

let sandbox: RunningSandbox;
let dir: string;
let shims: string;
let relayed: InProcessCommand;
const servers: Array<{ stop(): Promise<void> }> = [];

/**
 * Examples that share files run in one lane, one after another, in document order: a lane has a
 * `work` directory (where its commands run, scanned for the key) and a `home` (config, caches), with
 * the user's own input files. Lanes share nothing but the sandbox, so they run side by side.
 */
interface Lane {
  root: string;
  work: string;
  home: string;
}

function laneOf(where: string): 'readme' | 'data' | 'setup' {
  if (where === 'README.md' || where.startsWith('prospect pipeline')) return 'readme';
  return /^prospect (companies|contacts|verify) /.test(where) ? 'data' : 'setup';
}

function newLane(name: string): Lane {
  const root = join(dir, name);
  const lane = { root, work: join(root, 'work'), home: join(root, 'home') };
  for (const path of [
    '',
    'leads',
    '.local/share/bash-completion/completions',
    '.config/fish/completions',
    'zsh-functions',
  ])
    mkdirSync(join(lane.home, path), { recursive: true });
  mkdirSync(lane.work, { recursive: true });
  // The user's own files are the ones the project ships (examples/): what the README tells people to use.
  for (const name of readdirSync(EXAMPLES).filter((file) => file !== 'README.md'))
    copyFileSync(join(EXAMPLES, name), join(lane.work, name));
  return lane;
}

beforeAll(async () => {
  // The default dataset of `prospect --sandbox` / `prospect sandbox` (no seed, no size given), dated today.
  sandbox = await startTestSandbox({ seed: DEFAULT_SEED, companies: DEFAULT_COMPANIES, asOf: todayUtc() });
  dir = await scratchDir();
  shims = join(dir, 'bin');
  mkdirSync(shims);
  writeFileSync(join(shims, 'prospect'), `#!/bin/sh\nexec ${PROSPECT_COMMAND} "$@"\n`);
  // `npx prospect` in the clone runs the package's own bin: the same binary, without npm's start-up.
  writeFileSync(
    join(shims, 'npx'),
    `#!/bin/sh\n[ "$1" = prospect ] || { echo "npx shim: only npx prospect" >&2; exit 127; }\nshift\nexec prospect "$@"\n`,
  );
  for (const shim of ['prospect', 'npx']) chmodSync(join(shims, shim), 0o755);
  relayed = await inProcessCommand({ apiKey: KEY, timeoutMs: 120_000 });
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await relayed?.close();
  await sandbox?.close();
});

/**
 * The lane's environment. `prospect` on its PATH is the built binary when `spawned`, else the command
 * that runs main() in this process (inProcessCommand); `npx prospect` runs whichever `prospect` is.
 */
function environment(lane: Lane, spawned = false): Record<string, string> {
  return {
    PATH: `${spawned ? '' : `${relayed.bin}:`}${shims}:${process.env.PATH}`,
    HOME: lane.home,
    PROSPECT_BASE_URL: sandbox.url,
    PROSPECT_API_KEY: KEY,
    // What the config examples pipe in, and an "editor" that shows the file it is given.
    PROSPECT_KEY: KEY,
    EDITOR: 'cat',
    // One config and one cache for the lane, as one user has: `config set` then `config get`.
    PROSPECT_CONFIG_DIR: join(lane.home, '.config/prospect'),
    PROSPECT_CACHE_DIR: join(lane.home, '.cache/prospect'),
  };
}

/** Files under a directory, with their size and time, to see what a command wrote. */
function snapshot(root: string, into = new Map<string, string>()): Map<string, string> {
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) snapshot(path, into);
    else if (entry.isFile()) {
      const info = statSync(path);
      into.set(path, `${info.size}:${info.mtimeMs}`);
    }
  }
  return into;
}

/** `prospect sandbox …` serves until stopped: start it and wait for its address; it is stopped at the end. */
function startServer(command: string, lane: Lane): Promise<{ url: string; stderr: string }> {
  // A README line that puts the sandbox in the background (`… &`) runs in the foreground here: the
  // test's own child, so stopping it stops the sandbox (with the `&`, bash left it running, port held).
  const foreground = command.replace(/\s&(\s+#.*)?\s*$/, '$1');
  const child = spawn('bash', ['-c', `exec ${foreground}`], {
    cwd: lane.work,
    env: { ...process.env, ...environment(lane, true) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const ended = new Promise<void>((done) => child.on('close', () => done()));
  servers.push({
    stop: async () => {
      child.kill('SIGTERM');
      await ended;
    },
  });
  return new Promise((resolveUrl) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (stdout.includes('\n')) resolveUrl({ url: stdout.split('\n')[0]!, stderr });
    });
    void ended.then(() => resolveUrl({ url: '', stderr }));
  });
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * The command as run: `--sandbox` dropped (the shared sandbox is in the environment), a `companies`
 * listing or a `contacts` run without --max stopped at 20 rows and a `pipeline` at 20 companies (what
 * an example shows is that it runs and writes rows: the default dataset's whole Shopify listing, its
 * contacts and their paid checks cost a second of CPU or more for each example), and a `prospect
 * sandbox` without --companies serving 200 (its default 50,000 cost a second of CPU to build, 2,000 a
 * tenth, for each example), to keep the test's cost small.
 */
function asRun(command: string): string {
  return command
    .replace(/\s--sandbox(?=\s|$)/g, '')
    .replace(/\bprospect\s+(companies|contacts|pipeline)\b([^|>]*)/g, (segment, command: string, rest: string) =>
      // --changes compares whole listings (it refuses --max): those run whole.
      /--max(?=[\s=])|--dry-run|--changes/.test(rest) ? segment : `prospect ${command} --max 20${rest}`,
    )
    .replace(/\bprospect\s+sandbox\b([^|>]*)/g, (segment, rest: string) =>
      rest.includes('--companies') || rest.includes('--help') ? segment : `prospect sandbox --companies 200${rest}`,
    );
}

/** `NAME=value ` assignments before a command: bash puts them in that command's environment. */
const ASSIGNMENTS = /^(?:[A-Z_][A-Z0-9_]*=[^\s'"]+\s+)*/;

/**
 * An example that is one plain `prospect …` or `npx prospect …` (no pipe, redirect, substitution or
 * variable; a trailing `# comment` is bash's), perhaps after `NAME=value` assignments, runs in process:
 * the same main() with the words and environment bash makes of the line, in the lane's directory.
 * Every line that needs the shell runs in bash as written (runExample).
 */
function inProcess(command: string): boolean {
  const rest = command
    .replace(ASSIGNMENTS, '')
    .replace(/^npx\s+(?=prospect\s)/, '')
    .replace(/\s+#[^'"]*$/, '');
  return /^prospect\s/.test(rest) && !/[|<>;&$`()\\]/.test(rest) && !/[$`]/.test(command);
}

/** The arguments and assignments bash makes of `NAME=value … [npx] prospect ARGS` (quotes, `~`, comments). */
async function wordsOf(command: string, lane: Lane): Promise<{ args: string[]; env: Record<string, string> }> {
  // Bash expands `~` after the `=` of an assignment-shaped word, as it does in the assignment itself.
  const { stdout } = await execFileAsync('bash', ['-c', `printf '%s\\0' ${command}`], {
    cwd: lane.work,
    env: { ...process.env, ...environment(lane) },
  });
  const words = stdout.split('\0').slice(0, -1);
  const start = words.findIndex((word) => !/^[A-Z_][A-Z0-9_]*=/.test(word));
  const env = Object.fromEntries(
    words.slice(0, start).map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]),
  );
  // `npx prospect ARGS` runs the package's own bin, the same binary (see the npx shim).
  return { args: words.slice(start + (words[start] === 'npx' ? 2 : 1)), env };
}

/**
 * Runs one example in its lane and checks it: exit 0, no internal error, some output, rows where a
 * data command writes them, and the key in no output and no file it wrote in the working directory.
 * `spawned`: every prospect of the line is the built binary, a process of its own.
 */
async function runExample(example: Example, lane: Lane, spawned = false): Promise<void> {
  const command = asRun(example.command);
  const label = `${example.where}: ${example.command}`;
  if (/^prospect sandbox\b/.test(command)) {
    const server = await startServer(command, lane);
    expect(server.url, `${label}\n${server.stderr}`).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    return;
  }
  let script = command;
  // A completion loaded into this shell shows in `complete -p`; a zsh one goes where fpath points.
  if (command.startsWith('source <(')) script = `${command.replace(/\s+#.*$/, '')} && complete -p prospect`;
  if (command.includes('${fpath[1]}')) {
    // Off CI a machine without zsh skips this one example, naming the program; in CI it fails (programs.ts).
    const zsh = findProgram('zsh');
    if (zsh.skip) {
      console.log(`skipped, zsh is not installed (${zsh.install}): ${label}`);
      return;
    }
    script = `${zsh.command} -c ${shellQuote(`fpath=(${join(lane.home, 'zsh-functions')}); ${command}`)}`;
  }
  const before = snapshot(lane.root);
  const started = Date.now();
  // What the person at the prompt of `config set api-key` types.
  const input = /config set api-key\s*(#|$)/.test(command) && !command.includes('|') ? `${KEY}\n` : '';
  // The key must show in no output (the helpers check) and no file of the working directory: the
  // files this line wrote there are scanned below (the config file holds it, 0600, in HOME).
  const options = { cwd: lane.work, apiKey: KEY, scanCwd: false, env: environment(lane, spawned), input };
  let run;
  if (inProcess(command) && !spawned) {
    const { args, env } = await wordsOf(command, lane);
    run = await runInProcess(args, { ...options, env: { ...options.env, ...env }, timeoutMs: 120_000 });
  } else run = await runShell(script, { ...options, timeoutMs: 120_000 });
  if (process.env.EXAMPLES_TIMING) console.log(`${Date.now() - started} ms  ${label}`);
  expect(run.code, `${label}\nstderr: ${run.stderr}`).toBe(0);
  expect(run.stderr, label).not.toMatch(/internal error/);
  const written = [...snapshot(lane.root)]
    .filter(([path, stamp]) => before.get(path) !== stamp && statSync(path).size > 0)
    .map(([path]) => path);
  for (const path of written.filter((file) => file.startsWith(`${lane.work}/`)))
    expect(readFileSync(path, 'utf8').includes(KEY), `API key leaked to ${path}`).toBe(false);
  expect(run.stdout.trim() !== '' || written.length > 0, `${label}: no output at all`).toBe(true);
  if (DATA_COMMANDS.test(command) && !command.includes('--dry-run')) expectRows(label, command, run.stdout, written);
}

/** A data command writes rows: to the file it names (`-o F`, `> F`), else to stdout. */
function expectRows(label: string, command: string, stdout: string, written: string[]): void {
  const target = [...command.matchAll(/(?:\s-o|>)\s*("[^"]+"|\S+)/g)].map((m) => m[1]!.replace(/"/g, '')).pop();
  let text = stdout;
  if (target !== undefined) {
    const escaped = target
      .replace(/^~\//, '')
      .replace(/\$\([^)]*\)/g, '\0')
      .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      .replace(/\0/g, '[^/]+');
    const pattern = new RegExp(`/${escaped}$`);
    const file = written.find((path) => pattern.test(path));
    expect(file, `${label}: did not write ${target}`).toBeDefined();
    text = readFileSync(file!, 'utf8');
  }
  expect(text, label).not.toMatch(/\(no rows\)/);
  expect(text.trim().split('\n').length, `${label}: no rows`).toBeGreaterThanOrEqual(2);
}

describe('every example runs as written (spawned, against one sandbox of the default dataset)', () => {
  it('the README exit-code table is the one `prospect help exit-codes` prints, and holds', async () => {
    const rows = [...README.matchAll(/^\| (\d+) \| (.+) \|$/gm)].map((m) => ({ code: Number(m[1]), meaning: m[2] }));
    expect(rows).toEqual(EXIT_CODE_DOCS.map(({ code, meaning }) => ({ code, meaning })));
    // "No key" is 2 (found before any request), a key the service refuses is 4, and an output
    // directory that does not exist is 7 (output not writable), before any request.
    // In process: a spawned run exits with main()'s code (bin/prospect.js), as the spawned examples below show.
    expect((await runInProcess(['companies', '-t', 'Shopify'], { url: sandbox.url })).code).toBe(2);
    expect(
      (await runInProcess(['companies', '-t', 'Shopify'], { url: sandbox.url, apiKey: 'sandbox-nobody' })).code,
    ).toBe(4);
    expect(
      (
        await runInProcess(['companies', '-t', 'Shopify', '-o', join(dir, 'no/such/dir/x.csv')], {
          url: sandbox.url,
          apiKey: KEY,
        })
      ).code,
    ).toBe(7);
    // ... and the README's cron notes say so (they once called it 2).
    expect(README).toMatch(/`7` the output cannot be written \(an output directory that does not exist/);
    expect(README).not.toMatch(/`2`[^`]*output directory that does not exist/);
  });

  it('the README says how to get a bare prospect on the PATH', () => {
    expect(README).toMatch(/`npm link`/);
    expect(README).toMatch(/`npm i -g \.`/);
  });

  it('README.md, then every --help', async () => {
    const examples = [...readmeExamples(), ...(await allHelpExamples())];
    expect(examples.filter((example) => example.where === 'README.md').length).toBeGreaterThan(8);
    expect(new Set(examples.map((example) => example.where)).size).toBeGreaterThan(8);
    // The README's first chain of one prospect into another runs the built binary: two processes and a
    // pipe between them, as a user's shell runs them (the other lines' prospect runs in this process).
    const spawned = examples.find((example) => example.where === 'README.md' && PIPED.test(example.command));
    expect(spawned, 'a README line that pipes prospect into prospect').toBeDefined();
    const lanes = new Map<string, Example[]>();
    for (const example of examples)
      lanes.set(laneOf(example.where), [...(lanes.get(laneOf(example.where)) ?? []), example]);
    await Promise.all(
      [...lanes].map(async ([name, inLane]) => {
        const lane = newLane(name);
        // A line that already ran, as written, in this lane runs once: two --help texts show the same one.
        const ran = new Set<string>();
        for (const example of inLane) {
          if (ran.has(asRun(example.command))) continue;
          ran.add(asRun(example.command));
          await runExample(example, lane, example === spawned);
        }
      }),
    );
  }, 600_000);
});
