/**
 * The snapshots of a --state directory's listings: DIR/snapshots.sqlite, through better-sqlite3.
 * A walk writes its companies to a pending snapshot as its pages come, looks the previous snapshot up
 * one page at a time and reads its gone companies back in domain order, so nothing is held in
 * proportion to the listing. docs/state-directory.md has the layout and the crash behaviour.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { CliError, ExitCode, UsageError } from '../../exit-codes.js';
import { loadSqlite } from '../state-store/native-sqlite.js';
import { namesOf, rowDigest, stackDigest } from './diff.js';
import type { CompanyRow } from '../../api/index.js';
import type {
  ObservedCompany,
  PendingCompany,
  SnapshotInfo,
  SnapshotSeries,
  SnapshotStore,
} from '../state-store/types.js';

const SCHEMA_VERSION = 3;
/** The page cache, as the exports ledger's: lookups of random domains would only fill a larger one with history. */
const CACHE_KIB = 8192;
const BUSY_TIMEOUT_MS = 30_000;
/** Gone companies are read back this many at a time. */
const GONE_BATCH = 1000;

type Database = BetterSqlite3.Database;

const SCHEMA = [
  // status: 'pending' while its walk runs, 'complete' once published, 'replaced' by a later one until no
  // pending walk compares with it (compares_with); owner: host:pid of the walk. Each snapshot's companies
  // are a table of their own (listedTable), their rows one table a series (rowsTable).
  `CREATE TABLE IF NOT EXISTS snapshots (id TEXT PRIMARY KEY NOT NULL, series TEXT NOT NULL,
     taken_at TEXT NOT NULL, source TEXT, status TEXT NOT NULL, owner TEXT NOT NULL, compares_with TEXT)
     WITHOUT ROWID`,
  // The series' last complete snapshot: what a diff compares with, replaced only by compare-and-set.
  'CREATE TABLE IF NOT EXISTS heads (series TEXT PRIMARY KEY NOT NULL, snapshot_id TEXT NOT NULL) WITHOUT ROWID',
  // Every company a complete snapshot of the series listed: when first, and each technology's first.
  // A table with rowids: its rows (a kilobyte of dates) would overflow the pages of a WITHOUT ROWID one.
  `CREATE TABLE IF NOT EXISTS seen (series TEXT NOT NULL, domain TEXT NOT NULL, first_seen TEXT NOT NULL,
     technologies TEXT NOT NULL)`,
  'CREATE UNIQUE INDEX IF NOT EXISTS seen_by_domain ON seen (series, domain)',
];

/**
 * A snapshot's companies, appended in listing order as the walk goes: each domain with its stack's
 * digest, its row's digest, its first date (carried from the snapshots before) and whether it is new or
 * changed (fresh: only those can add first dates to `seen`). Indexed by domain once the walk ends (seal).
 */
function listedTable(id: string): string {
  return quoted(`listed ${id}`);
}

/**
 * A series' rows as JSON, each once by its digest: from one crawl to the next most companies' rows are
 * the same bytes, which a walk then does not write again. A row goes with the last snapshot naming it.
 */
function rowsTable(series: string): string {
  return quoted(`rows ${series}`);
}

function listedIndex(id: string): string {
  return quoted(`listed ${id} by domain`);
}

function quoted(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

interface PreviousRow {
  domain: string;
  stack: string;
  digest: string;
  first_seen: string;
}

interface GoneRow {
  domain: string;
  first_seen: string;
  seen_technologies: string;
  row: string;
}

export class LocalSnapshotStore implements SnapshotStore {
  private constructor(
    private readonly db: Database,
    readonly path: string,
  ) {}

  static async open(stateDir: string): Promise<LocalSnapshotStore> {
    const path = join(stateDir, 'snapshots.sqlite');
    const Database = await loadSqlite();
    const created = !existsSync(path);
    const store = storeCall(path, () => {
      const db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
      try {
        // Write-ahead log: a page's commit appends to the log. A pending snapshot's pages need not be
        // fsynced one by one (NORMAL): it counts only once published, and the publish is (FULL).
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = NORMAL');
        db.pragma(`cache_size = -${CACHE_KIB}`);
        db.pragma('mmap_size = 0');
        db.pragma('temp_store = FILE');
        migrate(db, path);
        return new LocalSnapshotStore(db, path);
      } catch (error) {
        db.close();
        throw error;
      }
    });
    // Business data, private like the rest of the state (SQLite creates its files 0644).
    if (created) await chmod(path, 0o600).catch(() => {});
    return store;
  }

  async openSeries(key: string, takenAt: string, resumeId?: string): Promise<SnapshotSeries> {
    // A resumable walk's checkpoint says a page is done once add() has returned: that page is fsynced.
    if (resumeId !== undefined) this.db.pragma('synchronous = FULL');
    return storeCall(this.path, () =>
      this.db
        .transaction(() => {
          const resumed = resumeId === undefined ? undefined : this.adopt(key, resumeId);
          this.dropDead();
          dropReplaced(this.db);
          return resumed ?? this.beginSnapshot(key, takenAt, resumeId ?? randomUUID());
        })
        .immediate(),
    );
  }

  /** A pending snapshot of the run being resumed, taken over, when the snapshot it compares with is still there. */
  private adopt(key: string, id: string): LocalSeries | undefined {
    const pending = this.db
      .prepare<[string, string], { taken_at: string; compares_with: string | null }>(
        "SELECT taken_at, compares_with FROM snapshots WHERE id = ? AND series = ? AND status = 'pending'",
      )
      .get(id, key);
    if (pending === undefined) return undefined;
    const previous = pending.compares_with === null ? undefined : this.snapshot(pending.compares_with);
    if (pending.compares_with !== null && previous === undefined) {
      dropSnapshot(this.db, id);
      return undefined;
    }
    this.db.prepare('UPDATE snapshots SET owner = ? WHERE id = ?').run(`${hostname()}:${process.pid}`, id);
    return new LocalSeries(this.db, this.path, key, id, pending.taken_at, previous, true);
  }

  /** The series' last complete snapshot, and this walk's pending one, comparing with it. */
  private beginSnapshot(key: string, takenAt: string, pending: string): LocalSeries {
    const head = this.db.prepare<[string], string>('SELECT snapshot_id FROM heads WHERE series = ?').pluck().get(key);
    const previous = head === undefined ? undefined : this.snapshot(head);
    this.db
      .prepare(
        'INSERT INTO snapshots (id, series, taken_at, source, status, owner, compares_with) ' +
          "VALUES (?, ?, ?, NULL, 'pending', ?, ?)",
      )
      .run(pending, key, takenAt, `${hostname()}:${process.pid}`, previous?.id ?? null);
    createListed(this.db, key, pending);
    return new LocalSeries(this.db, this.path, key, pending, takenAt, previous, false);
  }

  private snapshot(id: string): SnapshotInfo | undefined {
    const row = this.db
      .prepare<[string], { taken_at: string; source: string | null }>(
        "SELECT taken_at, source FROM snapshots WHERE id = ? AND status IN ('complete', 'replaced')",
      )
      .get(id);
    return row === undefined ? undefined : { id, takenAt: row.taken_at, source: row.source ?? undefined };
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** Pending snapshots of walks on this machine that are no longer running (killed): their rows go. */
  private dropDead(): void {
    const host = hostname();
    const pending = this.db
      .prepare<[], { id: string; owner: string }>("SELECT id, owner FROM snapshots WHERE status = 'pending'")
      .all();
    const dead = pending.filter(({ owner }) => {
      const at = owner.lastIndexOf(':');
      return owner.slice(0, at) === host && !isRunning(Number(owner.slice(at + 1)));
    });
    for (const { id } of dead) dropSnapshot(this.db, id);
  }
}

class LocalSeries implements SnapshotSeries {
  private readonly insert: BetterSqlite3.Statement<[string, string, string, string, number]>;
  private readonly insertRow: BetterSqlite3.Statement<[string, string]>;
  private readonly row: BetterSqlite3.Statement<[string], string>;
  /** The previous snapshot's lookup; undefined when there is none. */
  private readonly before: BetterSqlite3.Statement<[string], PreviousRow> | undefined;
  private readonly seenLookup: BetterSqlite3.Statement<[string, string], { domain: string; first_seen: string }>;
  private readonly firstDates: BetterSqlite3.Statement<[string, string], string>;
  readonly keepsObservations = false;

  constructor(
    private readonly db: Database,
    private readonly path: string,
    private readonly series: string,
    private readonly pending: string,
    readonly takenAt: string,
    readonly previous: SnapshotInfo | undefined,
    readonly resumed: boolean,
  ) {
    this.insert = db.prepare(
      `INSERT INTO ${listedTable(pending)} (domain, stack, digest, first_seen, fresh) VALUES (?, ?, ?, ?, ?)`,
    );
    this.insertRow = db.prepare(
      `INSERT INTO ${rowsTable(series)} (digest, row) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING`,
    );
    this.row = db.prepare<[string], string>(`SELECT row FROM ${rowsTable(series)} WHERE digest = ?`).pluck();
    // The domains as a JSON array, each found in the previous snapshot's index, which holds all its columns.
    this.before =
      previous === undefined
        ? undefined
        : db.prepare(
            `SELECT domain, stack, digest, first_seen FROM ${listedTable(previous.id)} ` +
              'WHERE domain IN (SELECT value FROM json_each(?))',
          );
    this.seenLookup = db.prepare(
      'SELECT domain, first_seen FROM seen WHERE series = ? AND domain IN (SELECT value FROM json_each(?))',
    );
    this.firstDates = db
      .prepare<[string, string], string>('SELECT technologies FROM seen WHERE series = ? AND domain = ?')
      .pluck();
  }

  /**
   * The page's domains in the previous snapshot (stack digest and first date), then those it did not
   * list in `seen`; a stack, a row and the technologies' first dates are read only when asked for.
   */
  lookup(domains: string[]): Promise<Map<string, ObservedCompany>> {
    const found = new Map<string, ObservedCompany>();
    storeCall(this.path, () => {
      if (this.before !== undefined)
        for (const { domain, stack, digest, first_seen } of this.before.all(JSON.stringify(domains)))
          found.set(
            domain,
            this.observed(
              domain,
              first_seen,
              previousCompany(stack, digest, () => storeCall(this.path, () => this.row.get(digest)!)),
            ),
          );
      const missing = domains.filter((domain) => !found.has(domain));
      if (missing.length > 0)
        for (const { domain, first_seen } of this.seenLookup.all(this.series, JSON.stringify(missing)))
          found.set(domain, this.observed(domain, first_seen, undefined));
    });
    return Promise.resolve(found);
  }

  /**
   * One transaction a page: appended to the pending snapshot's table, which has no index until the walk
   * ends, and a row the previous snapshot does not have to the series' rows.
   */
  add(companies: PendingCompany[]): Promise<void> {
    storeCall(this.path, () =>
      this.db
        .transaction(() => {
          for (const company of companies) {
            const digest = company.rowDigest ?? rowDigest(company.row);
            if (company.sameRow !== true) this.insertRow.run(digest, company.row);
            this.insert.run(
              company.domain,
              company.stack ?? stackDigest(company.technologies),
              digest,
              company.firstSeen,
              company.fresh === false ? 0 : 1,
            );
          }
        })
        .immediate(),
    );
    return Promise.resolve();
  }

  async *gone(): AsyncGenerator<ObservedCompany[]> {
    if (this.previous === undefined) return;
    storeCall(this.path, () => this.seal());
    // The previous snapshot's index in domain order, each domain probed in the pending one's; a row
    // twice in a listing (a resumed walk's page added again) is gone once.
    const page = this.db.prepare<[string, string, number], GoneRow>(
      'SELECT p.domain, p.first_seen, s.technologies AS seen_technologies, r.row ' +
        `FROM ${listedTable(this.previous.id)} p CROSS JOIN seen s ON s.series = ? AND s.domain = p.domain ` +
        `CROSS JOIN ${rowsTable(this.series)} r ON r.digest = p.digest ` +
        `WHERE p.domain > ? AND NOT EXISTS (SELECT 1 FROM ${listedTable(this.pending)} c WHERE c.domain = p.domain) ` +
        'GROUP BY p.domain ORDER BY p.domain LIMIT ?',
    );
    let after = '';
    for (;;) {
      const rows = storeCall(this.path, () => page.all(this.series, after, GONE_BATCH));
      if (rows.length === 0) return;
      yield rows.map((row) => ({
        domain: row.domain,
        firstSeen: row.first_seen,
        technologyFirstSeen: JSON.parse(row.seen_technologies) as Record<string, string>,
        previous: previousCompany(undefined, undefined, () => row.row),
      }));
      after = rows.at(-1)!.domain;
    }
  }

  publish(source: string | undefined): Promise<boolean> {
    const published = storeCall(this.path, () => {
      this.seal();
      this.db.pragma('synchronous = FULL');
      try {
        return this.db.transaction(() => this.swapHead(source)).immediate();
      } finally {
        this.db.pragma('synchronous = NORMAL');
      }
    });
    // After the durable commit: a crash before it only leaves the replaced snapshot for the next walk to drop.
    if (published) storeCall(this.path, () => this.db.transaction(() => dropReplaced(this.db)).immediate());
    return Promise.resolve(published);
  }

  /** Compare-and-set of the series' head; false when another walk of the same filters published first. */
  private swapHead(source: string | undefined): boolean {
    const head = this.db
      .prepare<[string], string>('SELECT snapshot_id FROM heads WHERE series = ?')
      .pluck()
      .get(this.series);
    if (head !== this.previous?.id) {
      dropSnapshot(this.db, this.pending);
      return false;
    }
    this.db
      .prepare("UPDATE snapshots SET status = 'complete', source = ? WHERE id = ?")
      .run(source ?? null, this.pending);
    this.db
      .prepare(
        'INSERT INTO heads (series, snapshot_id) VALUES (?, ?) ' +
          'ON CONFLICT (series) DO UPDATE SET snapshot_id = excluded.snapshot_id',
      )
      .run(this.series, this.pending);
    recordSeen(this.db, this.series, this.pending, this.takenAt);
    if (head !== undefined) this.db.prepare("UPDATE snapshots SET status = 'replaced' WHERE id = ?").run(head);
    return true;
  }

  abandon(): Promise<void> {
    if (!this.db.open) return Promise.resolve();
    storeCall(this.path, () => {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.db.transaction(() => dropSnapshot(this.db, this.pending)).immediate();
    });
    return Promise.resolve();
  }

  /** The walk has ended: the pending snapshot's index, built once over what was appended (cheaper than kept up). */
  private seal(): void {
    // A resumed walk adds again the pages its killed run answered past its checkpoint: one row a company,
    // and a row only a dropped duplicate named goes too.
    if (this.resumed) {
      const listed = listedTable(this.pending);
      const duplicates = `FROM ${listed} WHERE rowid NOT IN (SELECT max(rowid) FROM ${listed} GROUP BY domain)`;
      this.db.exec(`CREATE TEMP TABLE duplicates AS SELECT rowid AS id, digest ${duplicates}`);
      this.db.exec(`DELETE FROM ${listed} WHERE rowid IN (SELECT id FROM temp.duplicates)`);
      dropUnnamedRows(this.db, this.series, 'SELECT digest FROM temp.duplicates');
      this.db.exec('DROP TABLE temp.duplicates');
    }
    indexListed(this.db, this.pending);
  }

  private observed(domain: string, firstSeen: string, previous: ObservedCompany['previous']): ObservedCompany {
    let firstDates: Record<string, string> | undefined;
    const read = () => storeCall(this.path, () => this.firstDates.get(this.series, domain));
    return {
      domain,
      firstSeen,
      // JSON and NDJSON show each technology's first date; a CSV never reads it.
      get technologyFirstSeen() {
        return (firstDates ??= JSON.parse(read() ?? '{}') as Record<string, string>);
      },
      previous,
    };
  }
}

/** A company of the previous snapshot: its digests at hand, its row (and so its stack) read when asked for. */
function previousCompany(
  stack: string | undefined,
  rowDigest: string | undefined,
  readRow: () => string,
): NonNullable<ObservedCompany['previous']> {
  let row: string | undefined;
  let technologies: string[] | undefined;
  return {
    ...(stack === undefined ? {} : { stack }),
    ...(rowDigest === undefined ? {} : { rowDigest }),
    get row() {
      return (row ??= readRow());
    },
    get technologies() {
      return (technologies ??= namesOf(JSON.parse(this.row) as Pick<CompanyRow, 'technologies'>));
    },
  };
}

function createListed(db: Database, series: string, id: string): void {
  db.exec(
    `CREATE TABLE ${listedTable(id)} (domain TEXT NOT NULL, stack TEXT NOT NULL, digest TEXT NOT NULL, ` +
      'first_seen TEXT NOT NULL, fresh INTEGER NOT NULL)',
  );
  db.exec(
    `CREATE TABLE IF NOT EXISTS ${rowsTable(series)} (id INTEGER PRIMARY KEY, digest TEXT NOT NULL UNIQUE, ` +
      'row TEXT NOT NULL)',
  );
}

/** Every column: a lookup reads the index alone. */
function indexListed(db: Database, id: string): void {
  db.exec(
    `CREATE INDEX IF NOT EXISTS ${listedIndex(id)} ON ${listedTable(id)} (domain, stack, digest, first_seen, fresh)`,
  );
}

/**
 * The published snapshot's new and changed companies into `seen` (the unchanged ones' technologies
 * are there already, from the snapshot they are unchanged since): a company seen before keeps its
 * first date, and each technology its own (json_patch keeps the older date of a key both maps have).
 */
function recordSeen(db: Database, series: string, snapshot: string, takenAt: string): void {
  db.prepare(
    'INSERT INTO seen (series, domain, first_seen, technologies) ' +
      'SELECT @series, l.domain, l.first_seen, (SELECT json_group_object(name, @takenAt) FROM ' +
      "(SELECT DISTINCT json_extract(value, '$.t') AS name FROM json_each(r.row, '$.technologies'))) " +
      `FROM ${listedTable(snapshot)} l INDEXED BY ${listedIndex(snapshot)} ` +
      `CROSS JOIN ${rowsTable(series)} r ON r.digest = l.digest WHERE l.fresh = 1 ` +
      'ON CONFLICT (series, domain) DO UPDATE SET technologies = json_patch(excluded.technologies, seen.technologies)',
  ).run({ series, takenAt });
}

/** Replaced snapshots no pending walk compares with any more (a walk that started before the replacement may). */
function dropReplaced(db: Database): void {
  const unused = db
    .prepare<[], string>(
      "SELECT id FROM snapshots r WHERE status = 'replaced' AND NOT EXISTS " +
        "(SELECT 1 FROM snapshots p WHERE p.status = 'pending' AND p.compares_with = r.id)",
    )
    .pluck()
    .all();
  for (const id of unused) dropSnapshot(db, id);
}

/** A snapshot's companies, and the rows no other snapshot of its series names. */
function dropSnapshot(db: Database, id: string): void {
  const series = db.prepare<[string], string>('SELECT series FROM snapshots WHERE id = ?').pluck().get(id);
  db.prepare('DELETE FROM snapshots WHERE id = ?').run(id);
  if (series !== undefined && tableExists(db, `listed ${id}`))
    dropUnnamedRows(db, series, `SELECT digest FROM ${listedTable(id)}`);
  db.exec(`DROP TABLE IF EXISTS ${listedTable(id)}`);
}

/**
 * The series' rows of the digests `candidates` selects that no snapshot in the snapshots table names:
 * each snapshot's table scanned once (a set difference), never the rows themselves.
 */
function dropUnnamedRows(db: Database, series: string, candidates: string): void {
  if (!tableExists(db, `rows ${series}`)) return;
  const named = db
    .prepare<[string], string>('SELECT id FROM snapshots WHERE series = ?')
    .pluck()
    .all(series)
    .filter((other) => tableExists(db, `listed ${other}`));
  if (named.length === 0) {
    db.exec(`DROP TABLE ${rowsTable(series)}`);
    return;
  }
  const except = named.map((other) => ` EXCEPT SELECT digest FROM ${listedTable(other)}`).join('');
  db.exec(`DELETE FROM ${rowsTable(series)} WHERE digest IN (${candidates}${except})`);
}

function tableExists(db: Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

function migrate(db: Database, path: string): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SCHEMA_VERSION)
    throw new UsageError(
      `${path} was written by a newer version of prospect (snapshots version ${version}).`,
      'Update prospect, or use another --state directory.',
    );
  if (version === SCHEMA_VERSION) return;
  db.transaction(() => {
    if (version === 1) db.exec('ALTER TABLE seen RENAME TO seen_version1');
    for (const statement of SCHEMA) db.exec(statement);
    if (version === 1) fromVersion1(db);
    if (version === 2) fromVersion2(db);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

/**
 * Version 1 kept every snapshot's companies in one table, `listed` (with their technology names), and
 * `seen` without rowids: each complete snapshot moves to its own table. A pending one goes, as a killed
 * walk's would.
 */
function fromVersion1(db: Database): void {
  db.exec('INSERT INTO seen (series, domain, first_seen, technologies) SELECT * FROM seen_version1');
  db.function('stack_digest', { deterministic: true }, (names) => stackDigest(JSON.parse(String(names)) as string[]));
  for (const { id, series } of keptSnapshots(db))
    moveSnapshot(
      db,
      series,
      id,
      'SELECT l.domain, stack_digest(l.technologies) AS stack, s.first_seen, 0 AS fresh, l.row FROM listed l ' +
        'JOIN seen s ON s.series = @series AND s.domain = l.domain WHERE l.snapshot_id = @id',
    );
  db.exec('DROP TABLE listed; DROP TABLE seen_version1');
}

/** Version 2 kept each row in its snapshot's table: they move to their series' rows, once each. */
function fromVersion2(db: Database): void {
  for (const { id, series } of keptSnapshots(db)) {
    const old = quoted(`listed ${id} version 2`);
    db.exec(`DROP INDEX IF EXISTS ${listedIndex(id)}; ALTER TABLE ${listedTable(id)} RENAME TO ${old}`);
    moveSnapshot(db, series, id, `SELECT domain, stack, first_seen, fresh, row FROM ${old}`);
    db.exec(`DROP TABLE ${old}`);
  }
}

/** The complete and replaced snapshots of an older file; its pending ones go, as a killed walk's would. */
function keptSnapshots(db: Database): { id: string; series: string }[] {
  const all = db.prepare<[], { id: string; series: string; status: string }>(
    'SELECT id, series, status FROM snapshots',
  );
  const kept = [];
  for (const snapshot of all.all()) {
    if (snapshot.status !== 'pending') kept.push(snapshot);
    else {
      db.exec(`DROP TABLE IF EXISTS ${listedTable(snapshot.id)}`);
      db.prepare('DELETE FROM snapshots WHERE id = ?').run(snapshot.id);
    }
  }
  return kept;
}

/** A snapshot's companies from `select` (domain, stack, first_seen, fresh, row) into the current tables. */
function moveSnapshot(db: Database, series: string, id: string, select: string): void {
  db.function('row_digest', { deterministic: true }, (json) => rowDigest(String(json)));
  createListed(db, series, id);
  const from = `(${select}) AS moved`;
  db.prepare(
    `INSERT INTO ${rowsTable(series)} (digest, row) SELECT row_digest(row), row FROM ${from} WHERE true ` +
      'ON CONFLICT (digest) DO NOTHING',
  ).run({ series, id });
  db.prepare(
    `INSERT INTO ${listedTable(id)} (domain, stack, digest, first_seen, fresh) ` +
      `SELECT domain, stack, row_digest(row), first_seen, fresh FROM ${from}`,
  ).run({ series, id });
  indexListed(db, id);
}

function isRunning(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Runs a call on the database; SQLite's own failures said as what a person can act on. */
function storeCall<T>(path: string, call: () => T): T {
  try {
    return call();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (error instanceof CliError || typeof code !== 'string' || !code.startsWith('SQLITE_')) throw error;
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
      throw new CliError(
        `the snapshots ${path} are busy: another prospect process is writing them.`,
        ExitCode.locked,
        'Run again once it has finished.',
      );
    // A full disk or a file-size limit (SQLITE_IOERR_WRITE, _SHMSIZE...): the file is sound, only short of space.
    if (code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR'))
      throw new CliError(
        `could not write ${path}: ${code === 'SQLITE_FULL' ? 'the disk is full' : (error as Error).message} (${code}).`,
        ExitCode.output,
        'Free space on its disk; the last complete snapshot is kept.',
      );
    throw new CliError(
      `could not use the snapshots ${path}: ${(error as Error).message} (${code}).`,
      ExitCode.output,
      `Check the --state directory; removing ${path} starts the snapshots over ` +
        '(the next --changes lists every company as new).',
    );
  }
}
