/**
 * Files that survive a power cut, seen in the system calls the built binary makes (strace, a program
 * nobody here wrote): every file is fsynced before it is renamed into place, and the directory is
 * fsynced after the rename, for `companies -o` and for a paying `pipeline --state`. In the pipeline,
 * every paid verification line is on disk before the next checkpoint, and the exports ledger records
 * the leads only once the output's rename is durable. docs/reliability.md says what this buys.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, scratchDir } from '../helpers/cli.js';
import { findProgram } from '../helpers/programs.js';
import { SANDBOX_KEYS, startTestSandbox, todayUtc, type RunningSandbox } from '../helpers/sandbox.js';

const STRACE = findProgram('strace');
const KEY = SANDBOX_KEYS.growth;

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ seed: 3, companies: 5_000, asOf: todayUtc() });
});
afterAll(async () => {
  await sandbox?.close();
});

/** One system call as strace logged it: where it started and ended in the log, its arguments and result. */
interface Call {
  name: string;
  args: string;
  started: number;
  ended: number;
  result: number;
}

/** The log of `strace -f -y`: a call interrupted by another thread's is joined with its `resumed` line. */
function parseCalls(log: string): Call[] {
  const calls: Call[] = [];
  const pending = new Map<string, Call>();
  log.split('\n').forEach((line, index) => {
    const resumed = /^(\d+)\s+<\.\.\. (\w+) resumed>.*= (-?\d+)/.exec(line);
    if (resumed) {
      const call = pending.get(`${resumed[1]}:${resumed[2]}`);
      if (call) Object.assign(call, { ended: index, result: Number(resumed[3]) });
      return;
    }
    const started = /^(\d+)\s+(\w+)\((.*?)(?: <unfinished \.\.\.>|\)\s+= (-?\d+).*)$/.exec(line);
    if (!started) return;
    const call: Call = {
      name: started[2]!,
      args: started[3]!,
      started: index,
      ended: started[4] === undefined ? -1 : index,
      result: Number(started[4] ?? NaN),
    };
    if (started[4] === undefined) pending.set(`${started[1]}:${started[2]}`, call);
    calls.push(call);
  });
  return calls;
}

const SYNCS = new Set(['fsync', 'fdatasync']);
/** The path strace -y prints for a call's first argument, a descriptor: `20</tmp/x/out.csv>`. */
const fdPath = (call: Call) => /^\d+<([^>]*)>/.exec(call.args)?.[1];

/** The renames into `dir` (resolved against the run's working directory `cwd`), as [from, to]. */
function renamesInto(calls: Call[], cwd: string, dir: string): Array<{ call: Call; from: string; to: string }> {
  return calls
    .filter((call) => call.name.startsWith('rename') && call.result === 0)
    .map((call) => {
      const [from, to] = [...call.args.matchAll(/"([^"]+)"/g)].map((match) => resolve(cwd, match[1]!));
      return { call, from: from!, to: to! };
    })
    .filter(({ to }) => to.startsWith(dir));
}

/** Each rename: its file fsynced (and finished) before it, its directory fsynced after it. */
function expectDurableRenames(calls: Call[], renames: ReturnType<typeof renamesInto>): void {
  for (const { call, from, to } of renames) {
    const fileSynced = calls.some(
      (sync) =>
        SYNCS.has(sync.name) &&
        fdPath(sync) === from &&
        sync.result === 0 &&
        sync.ended >= 0 &&
        sync.ended < call.started,
    );
    expect(fileSynced, `${from} is fsynced before it is renamed to ${to}`).toBe(true);
    const directorySynced = calls.some(
      (sync) => SYNCS.has(sync.name) && fdPath(sync) === dirname(to) && sync.started > call.ended && sync.result === 0,
    );
    expect(directorySynced, `${dirname(to)} is fsynced after ${to} is renamed into it`).toBe(true);
  }
}

/**
 * A crash at any point never leaves the new FILE beside the old FILE.meta.json: the old sidecar is
 * unlinked, and that made durable, before FILE is renamed into place; the new sidecar is renamed in after.
 */
function expectSidecarNeverStale(
  calls: Call[],
  renames: ReturnType<typeof renamesInto>,
  cwd: string,
  output: string,
): void {
  const sidecar = `${output}.meta.json`;
  const unlinked = calls.find(
    (call) =>
      call.name.startsWith('unlink') &&
      call.result === 0 &&
      [...call.args.matchAll(/"([^"]+)"/g)].some((match) => resolve(cwd, match[1]!) === sidecar),
  );
  expect(unlinked, `the old ${sidecar} is unlinked`).toBeDefined();
  const outputRename = renames.find(({ to }) => to === output)!;
  const sidecarRename = renames.find(({ to }) => to === sidecar)!;
  const unlinkDurable = calls.some(
    (sync) =>
      SYNCS.has(sync.name) &&
      fdPath(sync) === dirname(sidecar) &&
      sync.result === 0 &&
      sync.started > unlinked!.ended &&
      sync.ended < outputRename.call.started,
  );
  expect(unlinkDurable, `the unlink of the old sidecar is fsynced before ${output} is renamed`).toBe(true);
  expect(sidecarRename.call.started).toBeGreaterThan(outputRename.call.ended);
}

/** Runs the built binary under strace, logging the calls that make a file durable. */
async function traced(args: string[], dir: string, env: Record<string, string> = {}) {
  const log = join(dir, 'strace.log');
  const run = await runCli(args, {
    url: sandbox.url,
    apiKey: KEY,
    cwd: dir,
    env,
    wrap: (command) => ({
      command: STRACE.command,
      args: [
        '-f',
        '-y',
        '-qq',
        '-o',
        log,
        '-e',
        'trace=openat,write,pwrite64,fsync,fdatasync,rename,renameat,renameat2,unlink,unlinkat',
        process.execPath,
        ...command,
      ],
    }),
  });
  return { run, calls: parseCalls(await readFile(log, 'utf8')) };
}

describe.skipIf(STRACE.skip)('fsync before each rename, and the directory after (strace)', () => {
  it('companies -o FILE --summary FILE: the output, its sidecar and the summary', async () => {
    const dir = await scratchDir();
    await writeFile(join(dir, 'out.csv'), 'last week\n');
    await writeFile(join(dir, 'out.csv.meta.json'), '{"last":"week"}\n');
    const { run, calls } = await traced(
      ['companies', '-t', 'Shopify', '--max', '30', '-o', 'out.csv', '--summary', 'run.json'],
      dir,
    );
    expect(run.code).toBe(0);
    const renames = renamesInto(calls, dir, dir);
    expect(renames.map(({ to }) => to).sort()).toEqual(
      ['out.csv', 'out.csv.meta.json', 'run.json'].map((name) => join(dir, name)),
    );
    expectDurableRenames(calls, renames);
    expectSidecarNeverStale(calls, renames, dir, join(dir, 'out.csv'));
  }, 120_000);

  it('pipeline --state --stale verify: checkpoints, publishing.json, the output; paid results before each checkpoint; the ledger after the output', async () => {
    const dir = await scratchDir();
    const state = join(dir, 'state');
    await writeFile(join(dir, 'leads.csv'), 'last week\n');
    await writeFile(join(dir, 'leads.csv.meta.json'), '{"last":"week"}\n');
    const { run, calls } = await traced(
      [
        '--page-size',
        '20',
        'pipeline',
        '-t',
        'Shopify',
        '--max',
        '60',
        '--seniority',
        'cxo',
        '--stale',
        'verify',
        '--verify-budget',
        '5',
        '--state',
        'state',
        '--only-new',
        '-o',
        'leads.csv',
        '--summary',
        'run.json',
      ],
      dir,
      { PROSPECT_CACHE_DIR: join(dir, 'cache') },
    );
    expect(run.code).toBe(0);
    const renames = renamesInto(calls, dir, dir);
    const targets = renames.map(({ to }) => to);
    expect(targets.filter((to) => to === join(state, 'current', 'checkpoint.json')).length).toBeGreaterThanOrEqual(2);
    for (const name of ['current/publishing.json', '../leads.csv', '../leads.csv.meta.json', '../run.json'])
      expect(targets).toContain(join(state, name));
    expectDurableRenames(calls, renames);
    expectSidecarNeverStale(calls, renames, dir, join(dir, 'leads.csv'));

    // Every paid result (a line of a verify-*.ndjson ledger) is synced before the next checkpoint names it.
    const paidWrites = calls.filter((call) => call.name === 'write' && /verify-[0-9a-f]+\.ndjson>/.test(call.args));
    expect(paidWrites.length).toBeGreaterThanOrEqual(5 * 2); // five units, each in the state's ledger and the shared one
    const checkpoints = renames.filter(({ to }) => to.endsWith('checkpoint.json')).map(({ call }) => call.started);
    for (const write of paidWrites) {
      const nextCheckpoint = checkpoints.find((at) => at > write.started) ?? Infinity;
      const synced = calls.some(
        (sync) =>
          SYNCS.has(sync.name) &&
          fdPath(sync) === fdPath(write) &&
          sync.started > write.started &&
          sync.ended < nextCheckpoint &&
          sync.result === 0,
      );
      expect(synced, `the paid result written to ${fdPath(write)} is synced before the next checkpoint`).toBe(true);
    }

    // The leads become "exported" (the ledger's commit, runs.ndjson) only after the output's rename is durable.
    const output = renames.find(({ to }) => to === join(dir, 'leads.csv'))!;
    const outputDurable = calls.find(
      (sync) => SYNCS.has(sync.name) && fdPath(sync) === dir && sync.started > output.call.ended,
    )!;
    const ledgerCommit = calls
      .filter((sync) => SYNCS.has(sync.name) && fdPath(sync) === join(state, 'exported.sqlite'))
      .at(-1)!;
    const runsLine = calls.find((call) => call.name === 'write' && fdPath(call) === join(state, 'runs.ndjson'))!;
    expect(ledgerCommit.started).toBeGreaterThan(outputDurable.ended);
    expect(runsLine.started).toBeGreaterThan(outputDurable.ended);
    expect(
      calls.some(
        (sync) =>
          SYNCS.has(sync.name) && fdPath(sync) === join(state, 'runs.ndjson') && sync.started > runsLine.started,
      ),
    ).toBe(true);
  }, 120_000);
});
