/**
 * The exports ledger in the test process: lookups, a run's keys added once, a success recorded
 * again after a crash between its steps, and SQLite's recovery of a transaction left open by a process killed with SIGKILL.
 * Expected keys are computed here (sha256 of the lead's identity), not by lead-key.ts.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import {
  LocalExportsLedger,
  finishPublishedRun,
  keyBatches,
  markPublishing,
  recordSuccess,
} from '../../../../src/core/pipeline/state/exports-ledger.js';
import { openRunState } from '../../../../src/core/pipeline/run-state.js';
import { newCheckpoint } from '../../../../src/core/pipeline/state/checkpoint.js';
import { StateDirectory } from '../../../../src/core/pipeline/state/state-directory.js';
import type { RunContext } from '../../../../src/runtime/context.js';
import { scratchDir } from '../../../helpers/scratch.js';

/** A lead with an address: its key is the first 96 bits of sha256("email|domain"). */
function lead(n: number) {
  const domain = `company${n}.com`;
  const business_email = `person${n}@${domain}`;
  return {
    domain,
    business_email,
    full_name: `Person ${n}`,
    title: 'CEO',
    key: createHash('sha256').update(`${business_email}|${domain}`).digest('hex').slice(0, 24),
  };
}
const leads = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => lead(from + i));
const keyLines = (rows: Array<{ key: string }>) => rows.map((row) => `${row.key}\n`).join('');

async function freshState(): Promise<StateDirectory> {
  return StateDirectory.open(join(await scratchDir('prospect-ledger-'), 'state'));
}

/** The run's current/keys as the pipeline leaves it, and its success recorded. */
async function succeed(
  state: StateDirectory,
  ledger: LocalExportsLedger,
  runId: string,
  rows: Array<{ key: string }>,
): Promise<void> {
  // Each run opens the state again, which makes the current/ that the last success removed.
  await StateDirectory.open(state.dir);
  await writeFile(state.keysPath, keyLines(rows));
  await recordSuccess(state, ledger, {
    run_id: runId,
    finished_at: '2026-01-05T03:00:00.000Z',
    rows: rows.length,
    only_new: true,
  });
}

/** Every key the ledger file holds, read with a connection of its own. */
function storedKeys(state: StateDirectory): string[] {
  const db = new Database(state.exportsLedgerPath, { readonly: true });
  try {
    return db
      .prepare<[], Buffer>('SELECT key FROM exported ORDER BY key')
      .pluck()
      .all()
      .map((key) => key.toString('hex'));
  } finally {
    db.close();
  }
}

async function runLines(state: StateDirectory): Promise<Array<{ run_id: string }>> {
  const text = await readFile(state.runsPath, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

const sorted = (keys: string[]) => [...keys].sort();

describe('looking leads up', () => {
  it('an empty ledger keeps every lead; after a run, only the leads that run did not export, in their order', async () => {
    const state = await freshState();
    const ledger = await LocalExportsLedger.open(state);
    try {
      const week1 = leads(0, 50);
      expect(ledger.newOnly(week1)).toEqual(week1);
      // Hashes only, but private like the rest of the state.
      expect((await stat(state.exportsLedgerPath)).mode & 0o777).toBe(0o600);
      await succeed(
        state,
        ledger,
        'run-1',
        week1.filter((_, i) => i % 2 === 0),
      );
      // Exported: 0, 2, 4, …, 48.
      expect(ledger.newOnly([...leads(44, 52), ...leads(0, 4)])).toEqual([
        lead(45),
        lead(47),
        lead(49),
        lead(50),
        lead(51),
        lead(1),
        lead(3),
      ]);
      expect(ledger.newOnly([])).toEqual([]);
    } finally {
      ledger.close();
    }
  });

  it('stores each key as its 12 bytes, once, however many runs exported it', async () => {
    const state = await freshState();
    const ledger = await LocalExportsLedger.open(state);
    try {
      // A run's file may repeat a key (a lead seen under two companies); the next run repeats some more.
      await succeed(state, ledger, 'run-1', [...leads(0, 30), ...leads(0, 5)]);
      await succeed(state, ledger, 'run-2', leads(20, 40));
      expect(storedKeys(state)).toEqual(sorted(leads(0, 40).map((row) => row.key)));
      const db = new Database(state.exportsLedgerPath, { readonly: true });
      try {
        expect(db.prepare('SELECT DISTINCT length(key) FROM exported').pluck().all()).toEqual([12]);
        // The runs table counts what each run added that was new to the ledger.
        expect(db.prepare('SELECT run_id, new_keys FROM runs ORDER BY run_id').all()).toEqual([
          { run_id: 'run-1', new_keys: 30 },
          { run_id: 'run-2', new_keys: 10 },
        ]);
      } finally {
        db.close();
      }
    } finally {
      ledger.close();
    }
  });

  it('reads a key file as a stream, in batches of bounded size, naming the line of a damaged key', async () => {
    const dir = await scratchDir('prospect-ledger-');
    const path = join(dir, 'keys');
    const rows = leads(0, 10_000);
    await writeFile(path, keyLines(rows));
    const file = (line: number) => ({ name: `keys:${line}`, startOver: 'start over' });
    const batches: Buffer[][] = [];
    for await (const batch of keyBatches(path, file)) batches.push(batch);
    expect(batches.length).toBeGreaterThan(1);
    for (const batch of batches) expect(batch.length).toBeLessThanOrEqual(8192);
    expect(batches.flat().map((key) => key.toString('hex'))).toEqual(rows.map((row) => row.key));

    await writeFile(path, `${rows[0]!.key}\n${rows[1]!.key.slice(0, 20)}\n`);
    const reading = (async () => {
      for await (const _ of keyBatches(path, file)) void _;
    })();
    await expect(reading).rejects.toThrow(/keys:2 is damaged/);
  });
});

describe('a success is recorded once, whatever crash comes between its steps', () => {
  it('recordSuccess done again (a crash after the commit, or after the runs.ndjson line) adds no key and no line', async () => {
    const state = await freshState();
    const ledger = await LocalExportsLedger.open(state);
    try {
      const record = { run_id: 'run-1', finished_at: '2026-01-05T03:00:00.000Z', rows: 10 };
      // Died after the ledger's commit, before runs.ndjson: the commit alone.
      await writeFile(state.keysPath, keyLines(leads(0, 10)));
      await ledger.recordRun(
        record,
        keyBatches(state.keysPath, (line) => ({ name: `keys:${line}`, startOver: '' })),
      );
      expect(
        await ledger.recordRun(
          record,
          keyBatches(state.keysPath, (line) => ({ name: `keys:${line}`, startOver: '' })),
        ),
      ).toBeUndefined();
      await recordSuccess(state, ledger, record);
      // Died after the runs.ndjson line, before current/ was cleared: done once more.
      await StateDirectory.open(state.dir);
      await writeFile(state.keysPath, keyLines(leads(0, 10)));
      await recordSuccess(state, ledger, record);
      expect(await runLines(state)).toEqual([{ ...record }]);
      expect(storedKeys(state)).toEqual(sorted(leads(0, 10).map((row) => row.key)));
      // docs/state-directory.md: a success leaves no current/ (issue 43).
      expect(existsSync(state.currentDir)).toBe(false);
    } finally {
      ledger.close();
    }
  });

  it('a run that died after moving its output into place is recorded by the next open, even of another command', async () => {
    const state = await freshState();
    const record = {
      run_id: 'run-died',
      finished_at: '2026-01-05T03:00:00.000Z',
      rows: 3,
      output: 'leads.csv',
      only_new: true,
    };
    // What the state holds after the rename: the checkpoint, the keys, the record, and no current/output.
    await writeFile(
      state.checkpointPath,
      JSON.stringify({ ...newCheckpoint('fingerprint-of-that-run', new Date()), listing_done: true }),
    );
    await writeFile(state.keysPath, keyLines(leads(0, 3)));
    await markPublishing(state, record);
    const said: string[] = [];
    const cleanups: Array<() => Promise<void> | void> = [];
    const ctx = {
      reporter: { info: (line: string) => said.push(line) },
      onCleanup: (task: () => Promise<void> | void) => cleanups.push(task),
    } as unknown as RunContext;
    try {
      const opened = await openRunState(ctx, state.dir, 'fingerprint-of-another-command');
      expect(opened.resumed).toBe(false);
      expect(said).toEqual([expect.stringContaining('run-died')]);
      expect(opened.exportsLedger!.newOnly(leads(0, 5))).toEqual(leads(3, 5));
      expect(await runLines(state)).toEqual([record]);
      expect(existsSync(state.checkpointPath)).toBe(false);
    } finally {
      for (const task of cleanups.reverse()) await task();
    }
  });

  it('a run whose output is still in current/ (not moved: stdout, another file system) is resumed, not recorded', async () => {
    const state = await freshState();
    const ledger = await LocalExportsLedger.open(state);
    try {
      await writeFile(state.outputPath, 'email\n');
      await writeFile(state.keysPath, keyLines(leads(0, 3)));
      await markPublishing(state, { run_id: 'run-1', finished_at: '2026-01-05T03:00:00.000Z', rows: 3 });
      expect(await finishPublishedRun(state, ledger)).toBeUndefined();
      expect(existsSync(state.publishingPath)).toBe(false);
      expect(existsSync(state.keysPath)).toBe(true);
      expect(ledger.newOnly(leads(0, 3))).toEqual(leads(0, 3));
      expect(await runLines(state)).toEqual([]);
    } finally {
      ledger.close();
    }
  });
});

describe('a dry run', () => {
  it('a dry run (openIfAny) creates nothing where no run has exported yet', async () => {
    const state = await freshState();
    expect(await LocalExportsLedger.openIfAny(state)).toBeUndefined();
    expect(existsSync(state.exportsLedgerPath)).toBe(false);
  });
});

describe('a damaged or foreign ledger file', () => {
  it('a file that is not a database: exit 2, naming it and how to start over', async () => {
    const state = await freshState();
    await writeFile(state.exportsLedgerPath, randomBytes(8192));
    await expect(LocalExportsLedger.open(state)).rejects.toThrow(
      `the exports ledger ${state.exportsLedgerPath} is damaged`,
    );
  });

  it('a ledger written by a newer prospect is refused, not misread', async () => {
    const state = await freshState();
    const db = new Database(state.exportsLedgerPath);
    db.pragma('user_version = 3');
    db.close();
    await expect(LocalExportsLedger.open(state)).rejects.toThrow(/newer version of prospect/);
  });
});

describe('a process killed with SIGKILL in the middle of a transaction', () => {
  it('leaves a hot journal that the next open rolls back: the committed keys stay, none of the killed ones are in', async () => {
    const state = await freshState();
    const ledger = await LocalExportsLedger.open(state);
    await succeed(state, ledger, 'run-1', leads(0, 100));
    ledger.close();
    const committedSize = (await stat(state.exportsLedgerPath)).size;

    // A child that writes 5,000 keys in one transaction with a tiny page cache, so that SQLite has
    // to write changed pages into the database file (after saving the originals in the journal)
    // long before the commit; then it says so and waits to be killed.
    const child = spawn(
      process.execPath,
      [
        '-e',
        `const Database = require('better-sqlite3');
         const db = new Database(process.argv[1]);
         db.pragma('cache_size = 10');
         db.exec('BEGIN IMMEDIATE');
         const insert = db.prepare('INSERT INTO exported (key) VALUES (?)');
         for (let i = 0; i < 5000; i++) insert.run(require('node:crypto').randomBytes(12));
         process.stdout.write('ready\\n');
         setInterval(() => {}, 1000);`,
        state.exportsLedgerPath,
      ],
      { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (data: Buffer) => (data.toString().includes('ready') ? resolve() : undefined));
      child.on('exit', () => reject(new Error('the child exited before its transaction was under way')));
    });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    // The test means something only if the killed process had changed the database file itself
    // (it grew by the pages it wrote) and left its journal behind.
    const journal = `${state.exportsLedgerPath}-journal`;
    expect(existsSync(journal)).toBe(true);
    expect((await stat(state.exportsLedgerPath)).size).toBeGreaterThan(committedSize);

    const reopened = await LocalExportsLedger.open(state);
    try {
      expect(existsSync(journal)).toBe(false);
      expect((await stat(state.exportsLedgerPath)).size).toBe(committedSize);
      expect(storedKeys(state)).toEqual(sorted(leads(0, 100).map((row) => row.key)));
      expect(reopened.newOnly(leads(95, 105))).toEqual(leads(100, 105));
      const check = new Database(state.exportsLedgerPath, { readonly: true });
      try {
        expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
      } finally {
        check.close();
      }
    } finally {
      reopened.close();
    }
  }, 30_000);
});
