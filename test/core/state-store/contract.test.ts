/**
 * The state-store contract, run against both stores: the local one (the cache directory's NDJSON
 * ledger and claim files, a --state directory's SQLite exports ledger) and the team's PostgreSQL
 * one, on a real throwaway server (test/helpers/postgres.ts). Each promise is checked the same way
 * on both; the team store's own promises (its claim token, its schema) are in ./pg.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseStateUrl } from '../../../src/config/state-url.js';
import { leadKey } from '../../../src/core/state-store/lead-key.js';
import { LocalExportsLedger } from '../../../src/core/pipeline/state/exports-ledger.js';
import { StateDirectory } from '../../../src/core/pipeline/state/state-directory.js';
import { openPgStore } from '../../../src/core/state-store/pg/store.js';
import type { TeamStore } from '../../../src/core/state-store/index.js';
import type { ExportsLedger, VerificationLedger } from '../../../src/core/state-store/types.js';
import { LocalVerificationLedger } from '../../../src/core/verification/ledger.js';
import { POSTGRES, testDatabase, TEST_TEAM_KEY } from '../../helpers/postgres.js';
import { scratchDir } from '../../helpers/scratch.js';

const LONG_AGO = new Date('2000-01-01T00:00:00Z');
const RESULT = { email: 'ana@example.com', status: 'valid', verified_at: '2026-11-01T10:00:00Z' };

interface Stores {
  /** Two handles on one verification ledger, as two processes have; and a third opened with its own cut-off. */
  ledgers(): Promise<
    [VerificationLedger, VerificationLedger, (freshSince: Date, ownRun?: string) => Promise<VerificationLedger>]
  >;
  /** Two jobs' lead ledgers of one store. */
  leads(): Promise<{ first: ExportsLedger; second: ExportsLedger; shared: boolean }>;
}

const local: Stores = {
  async ledgers() {
    const dir = await scratchDir();
    const open = async (freshSince: Date, ownRun?: string) =>
      LocalVerificationLedger.open(dir, 'verify-x.ndjson', freshSince, ownRun);
    return [await open(LONG_AGO), await open(LONG_AGO), open];
  },
  async leads() {
    const dir = await scratchDir();
    const state = await StateDirectory.open(dir);
    const ledger = await LocalExportsLedger.open(state);
    return { first: ledger, second: ledger, shared: false };
  },
};

async function pgStores(): Promise<Stores> {
  const db = await testDatabase('contract');
  const open = (): Promise<TeamStore> => openPgStore(parseStateUrl(db.url), 'contract-host', TEST_TEAM_KEY);
  const stores: TeamStore[] = [];
  const opened = async () => {
    const store = await open();
    stores.push(store);
    return store;
  };
  let ledgers = 0;
  return {
    async ledgers() {
      const name = `ledger${++ledgers}`;
      const open = async (freshSince: Date, ownRun?: string) =>
        (await opened()).openVerificationLedger(name, { freshSince, ownRun });
      return [await open(LONG_AGO), await open(LONG_AGO), open];
    },
    async leads() {
      const first = (await opened()).job('first');
      const second = (await opened()).job('second');
      first.beginRun('run-a');
      second.beginRun('run-b');
      return { first: first.leads, second: second.leads, shared: true };
    },
  };
}

const lead = (email: string) => ({ domain: 'example.com', business_email: email, full_name: null, title: null });

describe.each([
  ['local', async () => local],
  ['postgres', pgStores],
] as const)('the %s store', (name, make) => {
  const skip = name === 'postgres' && POSTGRES.skip;

  it.skipIf(skip)('a result put by one handle is found by another after a refresh', async () => {
    const [a, b] = await (await make()).ledgers();
    expect(b.get('ana@example.com')).toBeUndefined();
    await a.put('ana@example.com', RESULT);
    await b.refresh('ana@example.com');
    expect(b.get('ana@example.com')).toMatchObject({ status: 'valid', verified_at: RESULT.verified_at });
    expect(a.get('bob@example.com')).toBeUndefined();
  });

  it.skipIf(skip)('results older than the cut-off are not reused, but a run keeps and counts its own', async () => {
    const [a, , open] = await (await make()).ledgers();
    await a.put('old@example.com', { ...RESULT, verified_at: '2020-01-01T00:00:00Z', run: 'r1' });
    await a.put('new@example.com', { ...RESULT, run: 'r1' });
    await a.put('other@example.com', { ...RESULT, verified_at: '2020-01-01T00:00:00Z' });
    const cutOff = new Date('2025-01-01T00:00:00Z');
    const fresh = await open(cutOff);
    expect(fresh.get('old@example.com')).toBeUndefined();
    expect(fresh.get('new@example.com')?.verified_at).toBe(RESULT.verified_at);
    const resumed = await open(cutOff, 'r1');
    expect(resumed.get('old@example.com')?.status).toBe('valid');
    expect(resumed.get('other@example.com')).toBeUndefined();
    expect(resumed.countPaidBy('r1')).toBe(2);
    expect(resumed.countPaidBy('r2')).toBe(0);
  });

  it.skipIf(skip)('one claim at a time per address: the other waits for the release', async () => {
    const [a, b] = await (await make()).ledgers();
    const first = await a.claim('ana@example.com', 'key-a');
    let secondHasIt = false;
    const waiting = b.claim('ana@example.com', 'key-b').then((claim) => {
      secondHasIt = true;
      return claim;
    });
    const other = await b.claim('bob@example.com', 'key-c');
    expect(secondHasIt).toBe(false);
    await other.release();
    await first.release();
    await (await waiting).release();
    expect(secondHasIt).toBe(true);
  });

  it.skipIf(skip)('a claim pays with the proposed key; after a lost answer the next claimant inherits it', async () => {
    const [a, b] = await (await make()).ledgers();
    const first = await a.claim('ana@example.com', 'key-a');
    expect(first.token).toBe('key-a');
    await first.release(true);
    const second = await b.claim('ana@example.com', 'key-b');
    expect(second.token).toBe('key-a');
    await second.release();
    // Released after an answer (or before sending): no key is left behind.
    const third = await a.claim('ana@example.com', 'key-c');
    expect(third.token).toBe('key-c');
    await third.release();
  });

  it.skipIf(skip)('a put ends the claim: a waiting run gets its turn and finds the result', async () => {
    const [a, b] = await (await make()).ledgers();
    const first = await a.claim('ana@example.com', 'key-a');
    const waiting = b.claim('ana@example.com', 'key-b');
    await a.put('ana@example.com', RESULT);
    await first.release();
    const second = await waiting;
    await b.refresh('ana@example.com');
    expect(b.get('ana@example.com')?.status).toBe('valid');
    await second.release();
  });

  it.skipIf(skip)('an aborted wait for a claim ends with the abort', async () => {
    const [a, b] = await (await make()).ledgers();
    const first = await a.claim('ana@example.com', 'key-a');
    const controller = new AbortController();
    const waiting = b.claim('ana@example.com', 'key-b', controller.signal);
    controller.abort(new Error('stopped'));
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    await first.release();
  });

  it.skipIf(skip)('--only-new: a recorded run’s leads are not new again; others are', async () => {
    const { first, second, shared } = await (await make()).leads();
    const rows = [lead('a@example.com'), lead('b@example.com')];
    expect(await first.newOnly(rows)).toEqual(rows);
    const keys = [Buffer.from(leadKey(rows[0]!), 'hex')];
    const record = { run_id: 'run-a', finished_at: '2026-11-01T10:00:00Z', rows: 1, output_path: '/tmp/leads-a.csv' };
    expect(
      await first.recordRun(
        record,
        (async function* () {
          yield keys;
        })(),
      ),
    ).toBeGreaterThanOrEqual(0);
    // Recorded once: the same record again adds nothing.
    expect(
      await first.recordRun(
        record,
        (async function* () {
          yield keys;
        })(),
      ),
    ).toBeUndefined();
    expect(await second.newOnly(rows)).toEqual(shared ? [] : [rows[1]]);
    expect((await first.runThatWrote('/tmp/leads-a.csv'))?.run_id).toBe('run-a');
    expect(await first.runThatWrote('/tmp/other.csv')).toBeUndefined();
  });
});
