import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppendOnlyFile } from '../../../../src/io/append-only-file.js';
import { checkpointSchema, commitCheckpoint, readCheckpoint } from '../../../../src/core/pipeline/state/checkpoint.js';
import { StateDirectory } from '../../../../src/core/pipeline/state/state-directory.js';

const scratch: string[] = [];
afterEach(async () => {
  for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function stateWith(checkpoint: string): Promise<StateDirectory> {
  const dir = await mkdtemp(join(tmpdir(), 'prospect-checkpoint-'));
  scratch.push(dir);
  const state = await StateDirectory.open(dir);
  await writeFile(state.checkpointPath, checkpoint);
  return state;
}

const START = { cursor: null, skip: 0, done: false };

const FIRST_PAGE_NOT_YET_DONE = {
  version: 1,
  run_id: '20260101T000000-abcdef',
  fingerprint: '0123456789abcdef',
  command: 'pipeline',
  now: '2026-01-01T00:00:00.000Z',
  positions: null,
  listing_done: false,
  meta: null,
  output_bytes: 0,
  keys_bytes: 0,
  spooled: false,
  rows_written: 0,
  pages_done: 0,
  counters: {},
};

describe('reading a checkpoint back', () => {
  it('fills the counters a checkpoint written before its first page does not have', async () => {
    const checkpoint = await readCheckpoint(await stateWith(JSON.stringify(FIRST_PAGE_NOT_YET_DONE)));
    expect(checkpoint?.counters).toEqual({
      companies_seen: 0,
      domains_with_contacts: 0,
      truncated_at_limit: [],
      contacts: {
        written: 0,
        fresh: 0,
        stale: 0,
        unknown: 0,
        none: 0,
        droppedStale: 0,
        alreadyExported: 0,
        filteredOut: 0,
        undeliverable: { no_email: 0, role: 0, disposable: 0, invalid: 0, risky: 0, unknown: 0, stale_unverified: 0 },
        email_class: { personal: 0, role: 0, webmail: 0, disposable: 0 },
      },
      verification: {
        from_cache: 0,
        unchecked: 0,
        answers_lost: 0,
        may_also_have_cost: 0,
        idempotency_claimed: false,
      },
      excluded: { companies: 0, contacts: 0, suppressed: 0 },
      filtered_locally: 0,
      kept_empty: 0,
      stopped_at_max: false,
      changes: { new: 0, changed: 0, unchanged: 0 },
    });
  });

  it('keeps the counts and the listing provenance as they were written', async () => {
    const written = {
      ...FIRST_PAGE_NOT_YET_DONE,
      positions: [{ cursor: 'c2', skip: 0, done: false }],
      meta: { source: { dataset: 'd', method: 'm' }, scope: 'all' },
      rows_written: 12,
      pages_done: 1,
      counters: {
        companies_seen: 5,
        domains_with_contacts: 4,
        truncated_at_limit: ['a.com'],
        contacts: {
          written: 12,
          fresh: 6,
          stale: 3,
          unknown: 2,
          none: 1,
          droppedStale: 0,
          alreadyExported: 0,
          filteredOut: 4,
          undeliverable: { no_email: 1, role: 1, disposable: 0, invalid: 2, risky: 0, unknown: 1, stale_unverified: 3 },
          email_class: { personal: 9, role: 0, webmail: 1, disposable: 1 },
        },
        verification: {
          from_cache: 1,
          unchecked: 2,
          answers_lost: 3,
          may_also_have_cost: 2,
          idempotency_claimed: false,
        },
        excluded: { companies: 2, contacts: 1, suppressed: 1 },
        filtered_locally: 4,
        kept_empty: 3,
        stopped_at_max: true,
        changes: { new: 2, changed: 1, unchanged: 7 },
      },
    };
    const checkpoint = await readCheckpoint(await stateWith(JSON.stringify(written)));
    expect(JSON.stringify(checkpoint)).toBe(JSON.stringify(written));
  });

  it('keeps the parts of a split listing with one position per part', async () => {
    const written = {
      ...FIRST_PAGE_NOT_YET_DONE,
      positions: [
        { cursor: null, skip: 12, done: false },
        { cursor: 'c7', skip: 0, done: false },
      ],
      pages_done: 1,
      partition: {
        queries: [
          { technology: 'jQuery', notTechnology: 'PHP', country: 'france' },
          { technology: 'jQuery', moreTechnologies: ['PHP'], country: 'france' },
        ],
        total: 4012,
        contact_count: 81_234,
      },
    };
    const checkpoint = await readCheckpoint(await stateWith(JSON.stringify(written)));
    expect(checkpoint?.partition).toEqual(written.partition);
    expect(checkpoint?.positions).toEqual(written.positions);
  });

  it('has nothing to resume when there is no checkpoint', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'prospect-checkpoint-'));
    scratch.push(dir);
    expect(await readCheckpoint(await StateDirectory.open(dir))).toBeUndefined();
  });

  it.each([
    ['a negative byte count', { output_bytes: -1 }, /output_bytes/],
    ['another version', { version: 2 }, /version/],
    ['a clock that is no date', { now: 'yesterday' }, /now/],
    [
      'a partition without a position per part',
      {
        positions: [{ cursor: null, skip: 0, done: false }],
        partition: { queries: [{ technology: 'a' }, { technology: 'a', moreTechnologies: ['b'] }], total: 3 },
      },
      /positions/,
    ],
    [
      'a partition of one part',
      { positions: [{ cursor: null, skip: 0, done: false }], partition: { queries: [{ technology: 'a' }], total: 3 } },
      /partition/,
    ],
    [
      'a part without its technology',
      {
        positions: [START, START],
        partition: { queries: [{ notTechnology: 'b' }, { technology: 'a', moreTechnologies: ['b'] }], total: 3 },
      },
      /partition/,
    ],
  ])('refuses %s, naming the file and how to start over', async (_what, change, field) => {
    const state = await stateWith(JSON.stringify({ ...FIRST_PAGE_NOT_YET_DONE, ...change }));
    const error = await readCheckpoint(state).then(
      () => undefined,
      (thrown: unknown) => thrown as { message: string; hint?: string; exitCode: number },
    );
    expect(error?.exitCode).toBe(2);
    expect(error?.message).toMatch(field);
    expect(error?.message).toContain(state.checkpointPath);
    expect(error?.hint).toBe(
      `Remove ${state.currentDir} to start over: the unfinished run is dropped; earlier exports and paid verifications are kept.`,
    );
  });
});

describe('committing a checkpoint', () => {
  it('syncs every data file before the checkpoint that names its length replaces the last one', async () => {
    const state = await stateWith(JSON.stringify(FIRST_PAGE_NOT_YET_DONE));
    const next = checkpointSchema.parse({
      ...FIRST_PAGE_NOT_YET_DONE,
      output_bytes: 300,
      keys_bytes: 40,
      rows_written: 3,
      pages_done: 1,
    });
    // What each data file's sync found on disk: the checkpoint must still be the previous one.
    const seenAtSync: Array<{ file: string; checkpoint: unknown }> = [];
    const dataFile = (file: string) =>
      ({
        sync: async () =>
          void seenAtSync.push({
            file,
            checkpoint: JSON.parse(await readFile(state.checkpointPath, 'utf8')).pages_done,
          }),
      }) as unknown as AppendOnlyFile;

    await commitCheckpoint(state, next, [dataFile('output'), dataFile('keys')]);

    expect(seenAtSync).toEqual([
      { file: 'output', checkpoint: 0 },
      { file: 'keys', checkpoint: 0 },
    ]);
    expect(JSON.parse(await readFile(state.checkpointPath, 'utf8'))).toMatchObject({
      pages_done: 1,
      output_bytes: 300,
      keys_bytes: 40,
    });
  });
});
