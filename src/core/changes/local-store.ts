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
import type {
  ObservedCompany,
  SnapshotCompany,
  SnapshotInfo,
  SnapshotSeries,
  SnapshotStore,
} from '../state-store/types.js';

const SCHEMA_VERSION = 1;
/** The page cache, as the exports ledger's: lookups of random domains would only fill a larger one with history. */
const CACHE_KIB = 8192;
const BUSY_TIMEOUT_MS = 30_000;
/** Pages of the pending snapshot per commit: a commit costs a few fsyncs, a longer transaction blocks other writers. */
const PAGES_PER_COMMIT = 8;
/** Gone companies are read back this many at a time. */
const GONE_BATCH = 1000;

type Database = BetterSqlite3.Database;

const SCHEMA = [
  // status: 'pending' while its walk runs, 'complete' once published, 'replaced' by a later one until no
  // pending walk compares with it (compares_with); owner: host:pid of the walk.
  `CREATE TABLE IF NOT EXISTS snapshots (id TEXT PRIMARY KEY NOT NULL, series TEXT NOT NULL,
     taken_at TEXT NOT NULL, source TEXT, status TEXT NOT NULL, owner TEXT NOT NULL, compares_with TEXT)
     WITHOUT ROWID`,
  // The series' last complete snapshot: what a diff compares with, replaced only by compare-and-set.
  'CREATE TABLE IF NOT EXISTS heads (series TEXT PRIMARY KEY NOT NULL, snapshot_id TEXT NOT NULL) WITHOUT ROWID',
  `CREATE TABLE IF NOT EXISTS listed (snapshot_id TEXT NOT NULL, domain TEXT NOT NULL, technologies TEXT NOT NULL,
     row TEXT NOT NULL, PRIMARY KEY (snapshot_id, domain)) WITHOUT ROWID`,
  // Every company a complete snapshot of the series listed: when first, and each technology's first.
  `CREATE TABLE IF NOT EXISTS seen (series TEXT NOT NULL, domain TEXT NOT NULL, first_seen TEXT NOT NULL,
     technologies TEXT NOT NULL, PRIMARY KEY (series, domain)) WITHOUT ROWID`,
];

interface ObservedRow {
  domain: string;
  first_seen: string;
  seen_technologies: string;
  technologies: string | null;
  row: string | null;
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
        // Write-ahead log: a page's commit appends to the log, and dropping a replaced snapshot writes
        // no copy of its pages to a journal first; one fsync per commit.
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = FULL');
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
  private readonly lookupStatement: BetterSqlite3.Statement<[string, string, string], ObservedRow>;
  private readonly insert: BetterSqlite3.Statement<[string, string, string, string]>;
  private pagesInTransaction = 0;
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
    // The domains as a JSON array, each found by its primary key, with its row in the previous snapshot if any.
    this.lookupStatement = db.prepare(
      'SELECT s.domain, s.first_seen, s.technologies AS seen_technologies, l.technologies, l.row FROM seen s ' +
        'LEFT JOIN listed l ON l.snapshot_id = ? AND l.domain = s.domain ' +
        'WHERE s.series = ? AND s.domain IN (SELECT value FROM json_each(?))',
    );
    this.insert = db.prepare(
      'INSERT OR REPLACE INTO listed (snapshot_id, domain, technologies, row) VALUES (?, ?, ?, ?)',
    );
  }

  lookup(domains: string[]): Promise<Map<string, ObservedCompany>> {
    const rows = storeCall(this.path, () =>
      this.lookupStatement.all(this.previous?.id ?? '', this.series, JSON.stringify(domains)),
    );
    return Promise.resolve(new Map(rows.map((row) => [row.domain, observed(row)])));
  }

  add(companies: SnapshotCompany[]): Promise<void> {
    storeCall(this.path, () => {
      if (!this.db.inTransaction) this.db.exec('BEGIN IMMEDIATE');
      for (const company of companies)
        this.insert.run(this.pending, company.domain, JSON.stringify(company.technologies), company.row);
      if (++this.pagesInTransaction >= PAGES_PER_COMMIT) this.commit();
    });
    return Promise.resolve();
  }

  flush(): Promise<void> {
    storeCall(this.path, () => this.commit());
    return Promise.resolve();
  }

  async *gone(): AsyncGenerator<ObservedCompany[]> {
    if (this.previous === undefined) return;
    storeCall(this.path, () => this.commit());
    const page = this.db.prepare<[string, string, string, string, number], ObservedRow>(
      'SELECT p.domain, s.first_seen, s.technologies AS seen_technologies, p.technologies, p.row FROM listed p ' +
        'JOIN seen s ON s.series = ? AND s.domain = p.domain ' +
        'WHERE p.snapshot_id = ? AND p.domain > ? AND NOT EXISTS ' +
        '(SELECT 1 FROM listed c WHERE c.snapshot_id = ? AND c.domain = p.domain) ORDER BY p.domain LIMIT ?',
    );
    let after = '';
    for (;;) {
      const rows = storeCall(this.path, () =>
        page.all(this.series, this.previous!.id, after, this.pending, GONE_BATCH),
      );
      if (rows.length === 0) return;
      yield rows.map(observed);
      after = rows.at(-1)!.domain;
    }
  }

  publish(source: string | undefined): Promise<boolean> {
    const published = storeCall(this.path, () => {
      this.commit();
      return this.db
        .transaction(() => {
          const head = this.db
            .prepare<[string], string>('SELECT snapshot_id FROM heads WHERE series = ?')
            .pluck()
            .get(this.series);
          // Compare-and-set: another walk of the same filters published since this one read its previous.
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
          dropReplaced(this.db);
          return true;
        })
        .immediate();
    });
    return Promise.resolve(published);
  }

  abandon(): Promise<void> {
    if (!this.db.open) return Promise.resolve();
    storeCall(this.path, () => {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.db.transaction(() => dropSnapshot(this.db, this.pending)).immediate();
    });
    return Promise.resolve();
  }

  private commit(): void {
    if (this.db.inTransaction) this.db.exec('COMMIT');
    this.pagesInTransaction = 0;
  }
}

/**
 * The published snapshot's companies into `seen`: a company seen before keeps its first date, and
 * each technology its own (json_patch keeps the older date of a key both maps have).
 */
function recordSeen(db: Database, series: string, snapshot: string, takenAt: string): void {
  db.prepare(
    'INSERT INTO seen (series, domain, first_seen, technologies) ' +
      'SELECT @series, l.domain, @takenAt, ' +
      '(SELECT json_group_object(value, @takenAt) FROM json_each(l.technologies)) ' +
      'FROM listed l WHERE l.snapshot_id = @snapshot ' +
      'ON CONFLICT (series, domain) DO UPDATE SET technologies = json_patch(excluded.technologies, seen.technologies)',
  ).run({ series, snapshot, takenAt });
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

function dropSnapshot(db: Database, id: string): void {
  db.prepare('DELETE FROM listed WHERE snapshot_id = ?').run(id);
  db.prepare('DELETE FROM snapshots WHERE id = ?').run(id);
}

function observed(row: ObservedRow): ObservedCompany {
  return {
    domain: row.domain,
    firstSeen: row.first_seen,
    technologyFirstSeen: JSON.parse(row.seen_technologies) as Record<string, string>,
    previous:
      row.technologies === null || row.row === null
        ? undefined
        : { technologies: JSON.parse(row.technologies) as string[], row: row.row },
  };
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
    for (const statement of SCHEMA) db.exec(statement);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
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
    if (code === 'SQLITE_FULL')
      throw new CliError(`could not write ${path}: the disk is full (SQLITE_FULL).`, ExitCode.output);
    throw new CliError(
      `could not use the snapshots ${path}: ${(error as Error).message} (${code}).`,
      ExitCode.output,
      `Check the --state directory; removing ${path} starts the snapshots over ` +
        '(the next --changes lists every company as new).',
    );
  }
}
