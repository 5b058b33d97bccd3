/**
 * The diff of a --state directory on its own thread (diff-thread.ts, running the bundle's
 * dist/cli/diff-worker.js, as every bundled run does) gives what the diff in this thread gives: the
 * same rows, gone rows, counts and snapshots. A store's error comes back with its exit code and
 * hint, and a call after the thread has ended is refused instead of waiting for ever.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { CompanyRow } from '../../../src/api/index.js';
import { ThreadedDiff } from '../../../src/core/changes/diff-thread.js';
import { SeriesDiff, type ChangeRow, type ListingDiff } from '../../../src/core/changes/diff.js';
import { LocalSnapshotStore } from '../../../src/core/changes/local-store.js';
import { CliError, ExitCode } from '../../../src/exit-codes.js';
import { scratchDir } from '../../helpers/cli.js';

const WORKER = pathToFileURL(resolve(import.meta.dirname, '../../../dist/cli/diff-worker.js'));
const MONTHS = ['2026-10-15T00:00:00Z', '2026-11-15T00:00:00Z', '2026-12-15T00:00:00Z'];

function company(domain: string, names: string[], employees = '11-50'): CompanyRow {
  return {
    domain,
    company_name: domain,
    employee_range: employees,
    technologies: names.map((t) => ({ t, c: 'Widgets', v: null })),
  } as unknown as CompanyRow;
}

/** Three months: a stack changed, one dropped and back, a row changed but not its stack, a company gone. */
const LISTINGS = [
  [company('a.com', ['X', 'Y']), company('b.com', ['X']), company('c.com', ['Z']), company('e.com', ['X'])],
  [
    company('a.com', ['Y']),
    company('b.com', ['W', 'X']),
    company('d.com', ['Q', 'P']),
    company('e.com', ['X'], '51-200'),
  ],
  [company('a.com', ['X', 'Y']), company('c.com', ['Z']), company('d.com', ['P', 'Q']), company('e.com', ['X'])],
];

interface Opened {
  diff: ListingDiff;
  close(): Promise<void> | void;
}

async function inThisThread(state: string, takenAt: string): Promise<Opened> {
  const store = await LocalSnapshotStore.open(state);
  return { diff: new SeriesDiff(await store.openSeries('series', takenAt), true), close: () => store.close() };
}

async function onItsThread(state: string, takenAt: string): Promise<Opened> {
  const setup = { stateDir: state, seriesKey: 'series', takenAt, resumeId: undefined, observe: true };
  const diff = await ThreadedDiff.open(WORKER, setup);
  return { diff, close: () => diff.close() };
}

/** Each month walked whole, in pages of two, --changes' kinds written: what each walk wrote and counted. */
async function months(open: (state: string, takenAt: string) => Promise<Opened>) {
  const state = await scratchDir('diff-thread-');
  const walks = [];
  for (const [month, listing] of LISTINGS.entries()) {
    const { diff, close } = await open(state, MONTHS[month]!);
    try {
      const rows: ChangeRow[] = [];
      for (let at = 0; at < listing.length; at += 2)
        rows.push(...(await diff.page(listing.slice(at, at + 2), new Set(['new', 'changed']))));
      for await (const gone of diff.gone()) rows.push(...gone);
      const published = await diff.publish(undefined);
      walks.push({
        rows,
        counts: { ...diff.counts },
        listed: diff.listed,
        previous: diff.previous?.takenAt,
        published,
      });
    } finally {
      await close();
    }
  }
  return walks;
}

describe('the diff on its own thread', () => {
  it('writes, counts and keeps what the diff in this thread does, month after month', async () => {
    const expected = await months(inThisThread);
    expect(expected[1]!.counts).toEqual({ new: 1, changed: 2, gone: 1, unchanged: 1 });
    expect(await months(onItsThread)).toEqual(expected);
  });

  it("gives a store's error back with its exit code and hint, and ends the thread", async () => {
    const state = await scratchDir('diff-thread-newer-');
    const db = new Database(resolve(state, 'snapshots.sqlite'));
    db.pragma('user_version = 99');
    db.close();
    const error = await onItsThread(state, MONTHS[0]!).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(CliError);
    expect(error).toMatchObject({ exitCode: ExitCode.usage, hint: expect.stringContaining('Update prospect') });
    expect((error as Error).message).toContain('was written by a newer version of prospect (snapshots version 99)');
  });

  it('refuses a call after the thread has ended', async () => {
    const { diff, close } = await onItsThread(await scratchDir('diff-thread-closed-'), MONTHS[0]!);
    await close();
    await expect(diff.page([company('a.com', ['X'])])).rejects.toThrow('the snapshot thread ended');
  });
});
