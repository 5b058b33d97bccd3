/**
 * A checkpoint never runs ahead of the rows on disk: a pipeline stopped right after a page is
 * checkpointed has, in the committed part of its output, exactly the rows the checkpoint counts,
 * down to the page's last company's leads; and the resumed run writes the bytes of a clean run.
 * The runs go through a gate (test/helpers/page-gate.ts) that holds the companies page after the
 * chosen one, so the stop point is the page boundary itself, not a poll's guess. The runs that are
 * killed, and the resume after them, are spawned; the clean reference is main() in process.
 */
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { finishCli, runCli, runInProcess, scratchDir, startCli } from '../../../helpers/cli.js';
import { csvRecords } from '../../../helpers/csv.js';
import { startPageGate, type PageGate } from '../../../helpers/page-gate.js';
import { SANDBOX_KEYS, startTestSandbox, type TestSandbox } from '../../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
// One service query (one technology and country) in pages of 100 companies (a contacts batch waits
// for 100 domains, so a smaller page would wait for pages the gate holds), of a set where most
// companies have named contacts: many pages end with a company that has leads. Seven pages: the first
// two stops the test chooses (pages 2 and 5, each with the next page ending with leads too, and a
// page after it so the run must not end) are in them; more pages add only work.
const ARGS = [
  '--page-size',
  '100',
  'pipeline',
  '-t',
  'WordPress',
  '--country',
  'us',
  '--seniority',
  'cxo',
  '--max',
  '700',
];

let sandbox: TestSandbox;
let gate: PageGate;
beforeAll(async () => {
  sandbox = await startTestSandbox();
  gate = await startPageGate(sandbox.url);
});
afterAll(async () => {
  await gate?.close();
  await sandbox?.close();
});

const options = (cwd: string) => ({ url: gate.url, apiKey: KEY, cwd, timeoutMs: 120_000 });

interface Committed {
  pagesDone: number;
  rowsWritten: number;
  rows: Array<Record<string, string>>;
  keys: string[];
}

/** The committed part of current/output and current/keys, as the checkpoint on disk bounds them. */
async function committed(state: string): Promise<Committed> {
  const checkpoint = JSON.parse(await readFile(join(state, 'current', 'checkpoint.json'), 'utf8'));
  const output = (await readFile(join(state, 'current', 'output')))
    .subarray(0, checkpoint.output_bytes)
    .toString('utf8');
  const keys = (await readFile(join(state, 'current', 'keys'))).subarray(0, checkpoint.keys_bytes).toString('utf8');
  return {
    pagesDone: checkpoint.pages_done,
    rowsWritten: checkpoint.rows_written,
    rows: csvRecords(output),
    keys: keys.split('\n').filter(Boolean),
  };
}

/**
 * Lets a run through pages up to `page + 1`, holds the next, and kills the run once `page` is
 * checkpointed. A contacts batch (at most 100 domains) may wait for the page after its last
 * company, so the run stops with `page` or `page + 1` checkpointed, never another.
 */
async function stopAfterPage(
  args: string[],
  cwd: string,
  state: string,
  page: number,
  pagesBefore: number,
): Promise<Committed> {
  gate.allow(page + 1 - pagesBefore);
  const child: ChildProcess = startCli(args, options(cwd));
  const finished = finishCli(child, options(cwd));
  await vi.waitFor(
    async () => expect((await committed(state).catch(() => undefined))?.pagesDone).toBeGreaterThanOrEqual(page),
    { timeout: 60_000, interval: 25 },
  );
  child.kill('SIGKILL');
  expect((await finished).signal).toBe('SIGKILL');
  const onDisk = await committed(state);
  expect([page, page + 1]).toContain(onDisk.pagesDone);
  return onDisk;
}

describe('pipeline --state, stopped at a page boundary', () => {
  it('commits exactly the rows written, with the last company of the page, and resumes to the same bytes', async () => {
    const reference = await scratchDir();
    gate.allow(Number.POSITIVE_INFINITY);
    // The clean reference runs main() in process (runInProcess): what it gives is the pages and the bytes.
    const clean = await runInProcess(
      [...ARGS, '--state', join(reference, 'state'), '-o', join(reference, 'leads.csv')],
      options(reference),
    );
    expect(clean.code, clean.stderr).toBe(0);
    const expected = await readFile(join(reference, 'leads.csv'), 'utf8');
    const leadDomains = new Set(csvRecords(expected).map((row) => row.domain));
    const referencePages = [...gate.pages];
    // Where both this page and the next end with a company that has leads, a stop at either loses
    // that company's leads if the checkpoint runs ahead of the data. Not the last page: the run must not end.
    const endsWithLeads = referencePages.map((domains) => leadDomains.has(domains.at(-1)!));
    const stops = endsWithLeads.flatMap((ends, index) =>
      ends && endsWithLeads[index + 1] && index + 2 < referencePages.length ? [index + 1] : [],
    );
    const chosen = [stops[0]!, stops.find((page) => page > stops[0]! + 1)!];
    expect(chosen.every((page) => page !== undefined)).toBe(true);

    const work = await scratchDir();
    const state = join(work, 'state');
    const args = [...ARGS, '--state', state, '-o', join(work, 'leads.csv')];
    let pagesBefore = 0;
    for (const page of chosen) {
      const onDisk = await stopAfterPage(args, work, state, page, pagesBefore);
      expect(onDisk.rows).toHaveLength(onDisk.rowsWritten);
      expect(onDisk.keys).toHaveLength(onDisk.rowsWritten);
      expect(onDisk.rows.at(-1)?.domain).toBe(referencePages[onDisk.pagesDone - 1]!.at(-1));
      pagesBefore = onDisk.pagesDone;
    }

    gate.allow(Number.POSITIVE_INFINITY);
    const resumed = await runCli(['--verbose', ...args], options(work));
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/Resuming the unfinished run/);
    expect(await readFile(join(work, 'leads.csv'), 'utf8')).toBe(expected);
  }, 180_000);
});
