/**
 * What the earlier runs on a --state directory exported, for --only-new: an SQLite database,
 * DIR/exported.sqlite, through better-sqlite3. A run looks its leads up one company at a time and
 * adds its own keys when it succeeds, so it holds nothing in proportion to the state's history: the
 * page cache is capped and the file is read, never mapped, so a ledger of ten million keys costs a
 * run what an empty one does. docs/state-directory.md has the why, the crash behaviour and the
 * file layout.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { appendFile, chmod, open, readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { z } from 'zod';
import { CliError, ExitCode, UsageError } from '../../../exit-codes.js';
import { syncDirectory, writeFileAtomic } from '../../../io/atomic-file.js';
import { damaged, parseStoredJson, type StoredFile } from '../../shared/stored-json.js';
import { leadKey } from '../../state-store/lead-key.js';
import { loadSqlite } from '../../state-store/native-sqlite.js';
import { runRecordSchema, type RunRecord } from '../../state-store/run-record.js';
import type { StateDirectory } from './state-directory.js';
import type { AddressExport, ExportedAddress, ExportedBefore, ExportsLedger } from '../../state-store/types.js';

export { runRecordSchema, type RunRecord } from '../../state-store/run-record.js';

export type { LeadFields } from '../../state-store/run-record.js';
import type { LeadFields } from '../../state-store/run-record.js';

/**
 * A key file's line (lead-key.ts leadKeyLine): a lead key as leadKey() writes it, the hex of 96 bits
 * stored as those 12 bytes; for a lead with an address, its digest and last-confirmed day.
 */
const LEAD_KEY = /^([0-9a-f]{24})(?: ([0-9a-f]{24}) (\d{4}-\d{2}-\d{2}|-))?$/;
const KEY_BYTES = 12;

/**
 * The schema's version (PRAGMA user_version). A ledger written by a newer prospect is refused
 * rather than misread.
 */
const SCHEMA_VERSION = 2;

/**
 * SQLite's page cache for this connection. Lookups of random keys touch random pages, so a larger
 * cache would only fill up with history (RSS growing with the ledger); the pages come from the
 * operating system's file cache, which is not this process's memory.
 */
const CACHE_KIB = 4096;

/** How long a connection waits for another process's write (a dry run reading while a run commits). */
const BUSY_TIMEOUT_MS = 30_000;

/** A key file is read this many keys at a time: a batch stays small whatever the file holds. */
const READ_BATCH = 8192;

type Database = BetterSqlite3.Database;

/**
 * The exports ledger of one state directory; opened by the run that holds the state's lock (or by a
 * dry run, to read).
 */
export class LocalExportsLedger implements ExportsLedger {
  /** How many leads newOnly left out in this process. */
  private skipped = 0;
  private readonly lookup: BetterSqlite3.Statement<[string], Buffer>;
  private readonly stageKey: BetterSqlite3.Statement<[Buffer]>;
  private readonly mergeStaged: BetterSqlite3.Statement<[]>;
  private readonly clearStaged: BetterSqlite3.Statement<[]>;
  private readonly runRecorded: BetterSqlite3.Statement<[string], number>;
  private readonly insertRun: BetterSqlite3.Statement<[string, string, number, string]>;
  private readonly runRecords: BetterSqlite3.Statement<[], string>;
  private readonly insertAddress: BetterSqlite3.Statement<[Buffer, string, string | null]>;
  private readonly addressRuns: BetterSqlite3.Statement<[Buffer], { last_seen: string | null; record: string }>;
  /** The state's own salt: the addresses' hashes match no other state's, nor a digest anyone can compute. */
  private readonly salt: Buffer;

  private constructor(
    private readonly db: Database,
    readonly path: string,
  ) {
    // One statement for a whole batch of keys: their hex as a JSON array, each looked up by the
    // primary key (SQLite gathers the list in an index first, so the lookups go in key order).
    this.lookup = db
      .prepare<[string], Buffer>('SELECT key FROM exported WHERE key IN (SELECT unhex(value) FROM json_each(?))')
      .pluck();
    // Keys to add are appended to a temporary table first (a file, not memory), then sorted by
    // SQLite's external sorter (runs of a few megabytes, merged from files) and merged into the
    // ledger in key order: the ledger's B-tree is walked once, each page it changes read and
    // written once, instead of a random page per key.
    db.exec('CREATE TEMP TABLE IF NOT EXISTS staged (key BLOB NOT NULL)');
    this.stageKey = db.prepare<[Buffer]>('INSERT INTO temp.staged (key) VALUES (?)');
    this.mergeStaged = db.prepare<[]>(
      'INSERT OR IGNORE INTO main.exported (key) SELECT key FROM temp.staged ORDER BY key',
    );
    this.clearStaged = db.prepare<[]>('DELETE FROM temp.staged');
    this.runRecorded = db.prepare<[string], number>('SELECT 1 FROM runs WHERE run_id = ?').pluck();
    this.insertRun = db.prepare<[string, string, number, string]>(
      'INSERT INTO runs (run_id, finished_at, new_keys, record) VALUES (?, ?, ?, ?)',
    );
    this.runRecords = db.prepare<[], string>('SELECT record FROM runs ORDER BY finished_at DESC').pluck();
    this.insertAddress = db.prepare<[Buffer, string, string | null]>(
      'INSERT OR IGNORE INTO addresses (hash, run_id, last_seen) VALUES (?, ?, ?)',
    );
    this.addressRuns = db.prepare<[Buffer], { last_seen: string | null; record: string }>(
      'SELECT a.last_seen, r.record FROM addresses a JOIN runs r USING (run_id) ' +
        'WHERE a.hash = ? ORDER BY r.finished_at',
    );
    this.salt = db.prepare<[], Buffer>('SELECT salt FROM meta').pluck().get()!;
  }

  /**
   * Opens the state's ledger, creating it on first use. SQLite rolls back, on this open, a
   * transaction left unfinished by a process that died.
   */
  static async open(state: StateDirectory, options: { exclusive?: boolean } = {}): Promise<LocalExportsLedger> {
    const ledger = await LocalExportsLedger.connect(state);
    try {
      // The run that holds the state's lock keeps the file locked from its first lookup to its
      // end: a lookup then costs no lock, no journal check and no re-validation of the cache.
      // Other processes may still read (a dry run); a reader without the state's lock must not
      // do this, or a run's final commit would wait for it.
      if (options.exclusive) storeCall(ledger.path, () => ledger.db.pragma('locking_mode = EXCLUSIVE'));
    } catch (error) {
      ledger.close();
      throw error;
    }
    return ledger;
  }

  /** For a reader that must not create anything (a dry run): undefined when no run has exported anything yet. */
  static async openIfAny(state: StateDirectory): Promise<LocalExportsLedger | undefined> {
    if (!existsSync(state.exportsLedgerPath)) return undefined;
    return LocalExportsLedger.open(state);
  }

  private static async connect(state: StateDirectory): Promise<LocalExportsLedger> {
    const path = state.exportsLedgerPath;
    // Loaded here, not at the top: only a pipeline with --state pays for the native module.
    const Database = await loadSqlite();
    const created = !existsSync(path);
    const ledger = storeCall(path, () => {
      const db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
      try {
        // A rollback journal, synchronous commits: see docs/state-directory.md ("Why SQLite, and how").
        db.pragma('journal_mode = DELETE');
        db.pragma('synchronous = FULL');
        db.pragma(`cache_size = -${CACHE_KIB}`);
        db.pragma('mmap_size = 0');
        db.pragma('temp_store = FILE');
        db.pragma(`temp.cache_size = -${CACHE_KIB}`);
        const version = db.pragma('user_version', { simple: true }) as number;
        if (version > SCHEMA_VERSION) {
          throw new UsageError(
            `${path} was written by a newer version of prospect (ledger version ${version}).`,
            'Update prospect, or use another --state directory.',
          );
        }
        if (version < SCHEMA_VERSION) {
          db.transaction(() => {
            db.exec(
              'CREATE TABLE IF NOT EXISTS exported ' +
                `(key BLOB PRIMARY KEY NOT NULL CHECK (length(key) = ${KEY_BYTES})) WITHOUT ROWID`,
            );
            db.exec(
              'CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY NOT NULL, finished_at TEXT NOT NULL, ' +
                'new_keys INTEGER NOT NULL, record TEXT NOT NULL) WITHOUT ROWID',
            );
            // 2: which run exported which address (`prospect provenance`), keyed with the state's salt.
            db.exec('CREATE TABLE IF NOT EXISTS meta (one INTEGER PRIMARY KEY CHECK (one = 1), salt BLOB NOT NULL)');
            db.prepare('INSERT OR IGNORE INTO meta (one, salt) VALUES (1, ?)').run(randomBytes(32));
            db.exec(
              'CREATE TABLE IF NOT EXISTS addresses (hash BLOB NOT NULL, run_id TEXT NOT NULL, last_seen TEXT, ' +
                'PRIMARY KEY (hash, run_id)) WITHOUT ROWID',
            );
            db.pragma(`user_version = ${SCHEMA_VERSION}`);
          }).immediate();
        }
        return new LocalExportsLedger(db, path);
      } catch (error) {
        db.close();
        throw error;
      }
    });
    // Hashes only, but private like the rest of the state (SQLite creates its files 0644).
    if (created) {
      await chmod(path, 0o600).catch(() => {});
      syncDirectory(dirname(path));
    }
    return ledger;
  }

  /** The rows whose lead no earlier run exported, in their order: their keys looked up in one statement. */
  newOnly<Row extends LeadFields>(rows: Row[]): Row[] {
    if (rows.length === 0) return rows;
    const keys = rows.map(leadKey);
    const exported = storeCall(this.path, () => this.lookup.all(JSON.stringify(keys)));
    if (exported.length === 0) return rows;
    const known = new Set(exported.map((key) => key.toString('hex')));
    const kept = rows.filter((_, index) => !known.has(keys[index]!));
    this.skipped += rows.length - kept.length;
    return kept;
  }

  /** The leads newOnly left out, all this directory's earlier runs': named by the latest of them. */
  exportedBefore(): ExportedBefore[] {
    if (this.skipped === 0) return [];
    let latest: z.output<typeof runRecordSchema> | undefined;
    for (const text of storeCall(this.path, () => this.runRecords.iterate())) {
      const record = runRecordSchema.safeParse(parseOrUndefined(text));
      if (!record.success) continue;
      latest = record.data;
      break;
    }
    return [{ job: undefined, run: latest?.run_id, finishedAt: latest?.finished_at, leads: this.skipped }];
  }

  /**
   * A successful run's keys and its record, in one transaction. A run already recorded (its
   * recordSuccess is being finished after a crash) is left as it is: nothing is added twice.
   * Resolves to the number of keys that were new to the ledger, or undefined when already recorded.
   */
  async recordRun(
    record: RunRecord,
    batches: AsyncIterable<Buffer[]>,
    addresses: AsyncIterable<ExportedAddress[]> = noBatches(),
  ): Promise<number | undefined> {
    const parsed = runRecordSchema.parse(record);
    return this.transaction(async () => {
      if (this.runRecorded.get(parsed.run_id) === 1) return undefined;
      for await (const batch of batches) this.stage(batch);
      for await (const batch of addresses)
        for (const { digest, lastSeen } of batch)
          this.insertAddress.run(this.addressHash(digest), parsed.run_id, lastSeen);
      const added = this.merge();
      this.insertRun.run(parsed.run_id, parsed.finished_at, added, JSON.stringify(parsed));
      return added;
    });
  }

  /**
   * The latest recorded run whose output was `path` (absolute): that file holds leads this state
   * counts as exported.
   */
  runThatWrote(path: string): z.output<typeof runRecordSchema> | undefined {
    for (const text of storeCall(this.path, () => this.runRecords.iterate())) {
      const record = runRecordSchema.safeParse(parseOrUndefined(text));
      if (!record.success) continue;
      if (record.data.output_path === path) return record.data;
    }
    return undefined;
  }

  /** Every recorded run that exported the address (its addressDigest), oldest first. */
  exportsOf(digest: Buffer): AddressExport[] {
    const rows = storeCall(this.path, () => this.addressRuns.all(this.addressHash(digest)));
    return rows.flatMap(({ last_seen, record }) => {
      const parsed = runRecordSchema.safeParse(parseOrUndefined(record));
      return parsed.success ? [{ job: parsed.data.job ?? '', lastSeen: last_seen, record: parsed.data }] : [];
    });
  }

  private addressHash(digest: Buffer): Buffer {
    return createHmac('sha256', this.salt).update(digest).digest();
  }

  /** How many leads the state's runs exported (`prospect state`). */
  exportedCount(): number {
    return storeCall(this.path, () => this.db.prepare<[], number>('SELECT count(*) FROM exported').pluck().get() ?? 0);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private stage(batch: Buffer[]): void {
    for (const key of batch) this.stageKey.run(key);
  }

  /** The staged keys into the ledger, in key order; resolves to how many were new to it. */
  private merge(): number {
    const added = this.mergeStaged.run().changes;
    this.clearStaged.run();
    return added;
  }

  /**
   * A write transaction whose work may wait on file reads. BEGIN IMMEDIATE takes the write lock
   * first, so a second writer waits for the first rather than fails half-way; whatever is not
   * committed is rolled back (here on an error, by SQLite on the next open after a crash).
   */
  private async transaction<T>(work: () => Promise<T>): Promise<T> {
    storeCall(this.path, () => this.db.exec('BEGIN IMMEDIATE'));
    try {
      const result = await work();
      storeCall(this.path, () => this.db.exec('COMMIT'));
      return result;
    } catch (error) {
      try {
        if (this.db.open && this.db.inTransaction) this.db.exec('ROLLBACK');
      } catch {
        // The first failure is the one to report; SQLite rolls back on the next open in any case.
      }
      throw storeFailure(this.path, error) ?? error;
    }
  }
}

/**
 * A file of lead keys, one a line (current/keys), read as a stream and checked line by line:
 * batches of at most READ_BATCH keys, as 12-byte buffers.
 */
export async function* keyBatches(path: string, file: (line: number) => StoredFile): AsyncGenerator<Buffer[]> {
  let batch: Buffer[] = [];
  let lineNumber = 0;
  let rest = '';
  const take = (line: string) => {
    lineNumber += 1;
    if (line === '') return;
    const match = LEAD_KEY.exec(line);
    if (!match) throw damaged(file(lineNumber), `"${line.slice(0, 40)}" is not a lead key`);
    batch.push(Buffer.from(match[1]!, 'hex'));
  };
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: 64 * 1024 })) {
    const lines = (rest + (chunk as string)).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      take(line);
      if (batch.length === READ_BATCH) {
        yield batch;
        batch = [];
      }
    }
  }
  take(rest);
  if (batch.length > 0) yield batch;
}

/** The addresses of a key file's lines (those that have one), in batches; the file was checked by keyBatches. */
async function* addressBatches(path: string): AsyncGenerator<ExportedAddress[]> {
  let batch: ExportedAddress[] = [];
  for await (const line of lines(path)) {
    const match = LEAD_KEY.exec(line);
    if (!match?.[2]) continue;
    batch.push({ digest: Buffer.from(match[2], 'hex'), lastSeen: match[3] === '-' ? null : match[3]! });
    if (batch.length === READ_BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

async function* lines(path: string): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: 64 * 1024 })) {
    const parts = (rest + (chunk as string)).split('\n');
    rest = parts.pop()!;
    yield* parts;
  }
  if (rest !== '') yield rest;
}

/**
 * Just before a run's output is published: the record recordSuccess will keep, in current/, so
 * that a run which dies between publishing and recording is recorded by the next run on the state
 * (finishPublishedRun) instead of being lost or exported twice.
 */
export async function markPublishing(state: StateDirectory, record: RunRecord): Promise<RunRecord> {
  const parsed = runRecordSchema.parse(record);
  await writeFileAtomic(state.publishingPath, JSON.stringify(parsed), 0o600);
  await state.remote?.markPublishing(parsed);
  return parsed;
}

/**
 * After the output is in place: its leads become "exported" (the ledger, in one transaction with
 * the run's row there), the run gets its line in runs.ndjson, and the checkpoint goes. Each step
 * can be done again after a crash between them without adding anything twice.
 */
export async function recordSuccess(state: StateDirectory, ledger: ExportsLedger, record: RunRecord): Promise<void> {
  const keysFile = (line: number): StoredFile => ({
    name: `the run's lead keys ${state.keysPath}:${line}`,
    startOver:
      `Remove ${state.currentDir} to start over: the output is in place, ` + 'but its leads will count as new again.',
  });
  const keys = existsSync(state.keysPath);
  await ledger.recordRun(
    record,
    keys ? keyBatches(state.keysPath, keysFile) : noBatches(),
    keys ? addressBatches(state.keysPath) : noBatches(),
  );
  await appendRunLine(state.runsPath, runRecordSchema.parse(record));
  await state.discardCurrent();
}

/**
 * A run that died after publishing its output but before its success was recorded: recorded now
 * (resolves to its run id). When current/output is still there the output was not moved into place
 * (or was copied: stdout, another file system), so the run is resumed and publishes again instead.
 */
export async function finishPublishedRun(state: StateDirectory, ledger: ExportsLedger): Promise<string | undefined> {
  const text = await readFile(state.publishingPath, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  if (existsSync(state.outputPath)) {
    await rm(state.publishingPath, { force: true });
    return undefined;
  }
  const record = parseStoredJson(text, runRecordSchema, {
    name: `the record of a finished run ${state.publishingPath}`,
    startOver:
      `Remove ${state.currentDir} to start over: that run's output is in place, ` +
      'but its leads will count as new again.',
  });
  await recordSuccess(state, ledger, record);
  return record.run_id;
}

/** Appends the run's line to runs.ndjson, unless it is already the last one (a recordSuccess done again). */
async function appendRunLine(path: string, record: z.output<typeof runRecordSchema>): Promise<void> {
  const tail = await readTail(path, 64 * 1024);
  // A line torn by a crash mid-append is left as it is, and this run's line goes on a line of its own.
  const torn = tail !== '' && !tail.endsWith('\n');
  if (!torn && lastRunId(tail) === record.run_id) return;
  const created = !existsSync(path);
  await appendFile(path, `${torn ? '\n' : ''}${JSON.stringify(record)}\n`, { mode: 0o600, flush: true });
  if (created) syncDirectory(dirname(path));
}

/** The run id of the last line of runs.ndjson's tail, if it reads as a run's line. */
function lastRunId(tail: string): unknown {
  const last = tail
    .split('\n')
    .filter((line) => line !== '')
    .at(-1);
  if (last === undefined) return undefined;
  try {
    return (JSON.parse(last) as { run_id?: unknown }).run_id;
  } catch {
    return undefined;
  }
}

/** The last bytes of a file ('' when there is none): a run's line is a few hundred bytes. */
async function readTail(path: string, bytes: number): Promise<string> {
  const handle = await open(path, 'r').catch(() => undefined);
  if (!handle) return '';
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, bytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } finally {
    await handle.close();
  }
}

async function* noBatches<T>(): AsyncGenerator<T[]> {}

/** A row's JSON, or undefined when it does not parse (a row this check cannot use is passed over). */
function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Runs a call on the database, turning SQLite's failures into what a person can act on. */
function storeCall<T>(path: string, call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw storeFailure(path, error) ?? error;
  }
}

/**
 * What an SQLite failure means for the person running prospect; undefined for what is not SQLite's
 * (already a CliError, or a bug).
 */
function storeFailure(path: string, error: unknown): CliError | undefined {
  if (error instanceof CliError) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return undefined;
  const reason = (error as Error).message;
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
    return damaged(
      {
        name: `the exports ledger ${path}`,
        startOver: `Remove ${path} to start over: every lead then counts as new again.`,
      },
      reason,
    );
  }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new CliError(
      `the exports ledger ${path} is busy: another prospect process is writing it.`,
      ExitCode.locked,
      'Run again once it has finished.',
    );
  }
  if (code === 'SQLITE_FULL') {
    return new CliError(
      `could not write ${path}: the disk is full (SQLITE_FULL).`,
      ExitCode.output,
      'Free space, then run the same command again: nothing was recorded half-way.',
    );
  }
  if (
    code.startsWith('SQLITE_CANTOPEN') ||
    code.startsWith('SQLITE_READONLY') ||
    code === 'SQLITE_PERM' ||
    code.startsWith('SQLITE_IOERR')
  ) {
    return new CliError(
      `could not use the exports ledger ${path}: ${reason} (${code}).`,
      ExitCode.output,
      'Check the --state directory (permissions, free space, the disk), then run the same command again.',
    );
  }
  return undefined;
}
