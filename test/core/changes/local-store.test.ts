/**
 * The local snapshots (DIR/snapshots.sqlite) through SeriesDiff, on made-up listings: what the store's
 * shortcuts rely on. Stacks compared by digest, first dates added only by new and changed companies,
 * a company's first date carried from snapshot to snapshot, a row kept once while snapshots share it,
 * and version 1 and 2 files moved over.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { CompanyRow } from '../../../src/api/index.js';
import { SeriesDiff, type ChangeRow } from '../../../src/core/changes/diff.js';
import { LocalSnapshotStore } from '../../../src/core/changes/local-store.js';
import { scratchDir } from '../../helpers/cli.js';

const T1 = '2026-10-15T00:00:00Z';
const T2 = '2026-11-15T00:00:00Z';
const T3 = '2026-12-15T00:00:00Z';

function company(domain: string, names: string[]): CompanyRow {
  return {
    domain,
    company_name: domain,
    technologies: names.map((t) => ({ t, c: 'Widgets', v: null })),
  } as unknown as CompanyRow;
}

/** One complete walk of a listing on the state: its rows, gone ones last. */
async function walk(state: string, takenAt: string, listing: CompanyRow[]): Promise<ChangeRow[]> {
  const store = await LocalSnapshotStore.open(state);
  try {
    const diff = new SeriesDiff(await store.openSeries('series', takenAt), true);
    const rows = await diff.page(listing);
    for await (const gone of diff.gone()) rows.push(...gone);
    expect(await diff.publish(undefined)).toBe(true);
    return rows;
  } finally {
    store.close();
  }
}

const byDomain = (rows: ChangeRow[]) => new Map(rows.map((row) => [row.domain, row]));
const firstDates = (row: ChangeRow) =>
  Object.fromEntries(row.technologies.map((entry) => [entry.t, entry.observed_first_seen]));

describe('local snapshots', () => {
  it('three walks: kinds, stacks, and first dates carried through a drop, a re-add and a return', async () => {
    const state = await scratchDir('snapshots-');
    await walk(state, T1, [company('a.com', ['X', 'Y']), company('b.com', ['X']), company('c.com', ['Z'])]);
    const second = byDomain(
      // d.com's stack in another order is the same stack: unchanged, though its digest differs.
      await walk(state, T2, [company('a.com', ['Y']), company('b.com', ['W', 'X']), company('d.com', ['Q', 'P'])]),
    );
    expect(second.get('a.com')).toMatchObject({ change: 'changed', technologies_removed: ['X'] });
    expect(second.get('b.com')).toMatchObject({ change: 'changed', technologies_added: ['W'] });
    expect(second.get('c.com')).toMatchObject({ change: 'gone', first_seen: T1, previous_snapshot: T1 });
    expect(second.get('d.com')).toMatchObject({ change: 'new', first_seen: T2 });

    const third = byDomain(
      await walk(state, T3, [
        company('a.com', ['X', 'Y']),
        company('b.com', ['W', 'X']),
        company('c.com', ['Z', 'R']),
        company('d.com', ['P', 'Q']),
      ]),
    );
    expect(third.get('a.com')).toMatchObject({ change: 'changed', technologies_added: ['X'], first_seen: T1 });
    // X went in the second walk and came back: its first date is still the first walk's.
    expect(firstDates(third.get('a.com')!)).toEqual({ X: T1, Y: T1 });
    // Unchanged since the second walk: W's first date is the one that walk recorded.
    expect(third.get('b.com')).toMatchObject({ change: 'unchanged', first_seen: T1 });
    expect(firstDates(third.get('b.com')!)).toEqual({ W: T2, X: T1 });
    // Listed by the first walk, not the second: new again, first seen in the first.
    expect(third.get('c.com')).toMatchObject({ change: 'new', first_seen: T1 });
    expect(firstDates(third.get('c.com')!)).toEqual({ Z: T1, R: T3 });
    expect(third.get('d.com')).toMatchObject({ change: 'unchanged', first_seen: T2 });
    expect(firstDates(third.get('d.com')!)).toEqual({ P: T2, Q: T2 });
  });

  it('a row the previous snapshot has is stored once, and a row no snapshot names goes', async () => {
    const state = await scratchDir('snapshots-rows-');
    await walk(state, T1, [company('a.com', ['X']), company('b.com', ['X']), company('c.com', ['X'])]);
    expect(storedRows(state)).toEqual(['a.com', 'b.com', 'c.com']);
    // a.com the same bytes, b.com changed, c.com gone, d.com new: the first walk's b.com and c.com go with it.
    const second = byDomain(
      await walk(state, T2, [company('a.com', ['X']), company('b.com', ['Y']), company('d.com', ['X'])]),
    );
    expect([...second.values()].map((row) => [row.domain, row.change])).toEqual([
      ['a.com', 'unchanged'],
      ['b.com', 'changed'],
      ['d.com', 'new'],
      ['c.com', 'gone'],
    ]);
    expect(storedRows(state)).toEqual(['a.com', 'b.com Y', 'd.com']);

    // A walk abandoned: its own rows go, the last complete snapshot's stay.
    const store = await LocalSnapshotStore.open(state);
    const diff = new SeriesDiff(await store.openSeries('series', T3), true);
    await diff.page([company('a.com', ['X']), company('e.com', ['X'])]);
    expect(storedRows(state)).toEqual(['a.com', 'b.com Y', 'd.com', 'e.com']);
    await diff.abandon();
    store.close();
    expect(storedRows(state)).toEqual(['a.com', 'b.com Y', 'd.com']);
  });

  it('a version 2 file: each row moves to its series once, and the next walk compares with it', async () => {
    const state = await scratchDir('snapshots-v2-');
    await LocalSnapshotStore.open(state).then((store) => store.close());
    writeVersion2(join(state, 'snapshots.sqlite'));
    const rows = byDomain(await walk(state, T2, [company('a.com', ['X']), company('c.com', ['Z'])]));
    expect(rows.get('a.com')).toMatchObject({ change: 'changed', technologies_removed: ['Y'], first_seen: T1 });
    expect(rows.get('b.com')).toMatchObject({ change: 'gone', company_name: 'b.com', first_seen: T1 });
    expect(rows.get('c.com')).toMatchObject({ change: 'new', first_seen: T2 });
    expect(storedRows(state)).toEqual(['a.com', 'c.com Z']);
  });

  it('a version 1 file: its last complete snapshot is what the next walk compares with', async () => {
    const state = await scratchDir('snapshots-v1-');
    await LocalSnapshotStore.open(state).then((store) => store.close());
    writeVersion1(join(state, 'snapshots.sqlite'));
    const rows = byDomain(await walk(state, T2, [company('a.com', ['X']), company('c.com', ['Z'])]));
    expect(rows.get('a.com')).toMatchObject({ change: 'changed', technologies_removed: ['Y'], first_seen: T1 });
    expect(firstDates(rows.get('a.com')!)).toEqual({ X: T1 });
    expect(rows.get('b.com')).toMatchObject({ change: 'gone', company_name: 'b.com', first_seen: T1 });
    expect(rows.get('c.com')).toMatchObject({ change: 'new', first_seen: T2 });
    // The version 1 table is gone, and the file is at the current version.
    const db = new Database(join(state, 'snapshots.sqlite'), { readonly: true });
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE name = 'listed'").get()).toEqual({ n: 0 });
    db.close();
  });
});

/**
 * The series' stored rows, read by SQL: each as its domain, with its technologies when not only X.
 * Sorted, since the rows table's order is the store's own.
 */
function storedRows(state: string): string[] {
  const db = new Database(join(state, 'snapshots.sqlite'), { readonly: true });
  try {
    const rows = db.prepare('SELECT row FROM "rows series"').pluck().all() as string[];
    return rows
      .map((json) => JSON.parse(json) as CompanyRow)
      .map(({ domain, technologies }) => {
        const names = technologies.map((entry) => entry.t).join(' ');
        return names === 'X' ? domain : `${domain} ${names}`;
      })
      .sort();
  } finally {
    db.close();
  }
}

const OLD_SNAPSHOTS_AND_HEADS = `DROP TABLE snapshots; DROP TABLE heads; DROP TABLE seen;
  CREATE TABLE snapshots (id TEXT PRIMARY KEY NOT NULL, series TEXT NOT NULL, taken_at TEXT NOT NULL, source TEXT,
    status TEXT NOT NULL, owner TEXT NOT NULL, compares_with TEXT) WITHOUT ROWID;
  CREATE TABLE heads (series TEXT PRIMARY KEY NOT NULL, snapshot_id TEXT NOT NULL) WITHOUT ROWID;`;

/**
 * A snapshots file as an older version wrote it (its schema, by hand): one complete snapshot s1 of
 * a.com and b.com, and s0 pending; `listed` writes a company's rows in that version's tables.
 */
function writeOldFile(
  path: string,
  schema: string,
  pendingComparesWith: string | null,
  listed: (db: Database.Database, domain: string, names: readonly string[]) => void,
): void {
  const db = new Database(path);
  db.exec(`${OLD_SNAPSHOTS_AND_HEADS}\n${schema}`);
  db.prepare("INSERT INTO snapshots VALUES ('s1', 'series', ?, NULL, 'complete', 'h:1', NULL)").run(T1);
  db.prepare("INSERT INTO snapshots VALUES ('s0', 'series', ?, NULL, 'pending', 'h:1', ?)").run(
    T1,
    pendingComparesWith,
  );
  db.exec("INSERT INTO heads VALUES ('series', 's1')");
  for (const [domain, names] of [
    ['a.com', ['X', 'Y']],
    ['b.com', ['X']],
  ] as const) {
    listed(db, domain, names);
    const firstSeen = JSON.stringify(Object.fromEntries(names.map((name) => [name, T1])));
    db.prepare('INSERT INTO seen VALUES (?, ?, ?, ?)').run('series', domain, T1, firstSeen);
  }
  db.close();
}

function writeVersion2(path: string): void {
  const schema = `CREATE TABLE seen (series TEXT NOT NULL, domain TEXT NOT NULL, first_seen TEXT NOT NULL, technologies TEXT NOT NULL);
    CREATE UNIQUE INDEX seen_by_domain ON seen (series, domain);
    CREATE TABLE "listed s1" (domain TEXT NOT NULL, stack TEXT NOT NULL, first_seen TEXT NOT NULL,
      fresh INTEGER NOT NULL, row TEXT NOT NULL);
    CREATE TABLE "listed s0" (domain TEXT NOT NULL, stack TEXT NOT NULL, first_seen TEXT NOT NULL,
      fresh INTEGER NOT NULL, row TEXT NOT NULL);
    CREATE INDEX "listed s1 by domain" ON "listed s1" (domain, stack, first_seen, fresh);
    PRAGMA user_version = 2;`;
  writeOldFile(path, schema, 's1', (db, domain, names) => {
    // The stack digest as version 2 wrote it: sha1 of the names' JSON, base64url (the file keeps it as it is).
    const stack = createHash('sha1').update(JSON.stringify(names)).digest('base64url');
    const row = JSON.stringify(company(domain, [...names]));
    db.prepare('INSERT INTO "listed s1" VALUES (?, ?, ?, 0, ?)').run(domain, stack, T1, row);
    db.prepare('INSERT INTO "listed s0" VALUES (?, ?, ?, 1, ?)').run(domain, stack, T1, row);
  });
}

function writeVersion1(path: string): void {
  const schema = `CREATE TABLE listed (snapshot_id TEXT NOT NULL, domain TEXT NOT NULL, technologies TEXT NOT NULL,
      row TEXT NOT NULL, PRIMARY KEY (snapshot_id, domain)) WITHOUT ROWID;
    CREATE TABLE seen (series TEXT NOT NULL, domain TEXT NOT NULL, first_seen TEXT NOT NULL,
      technologies TEXT NOT NULL, PRIMARY KEY (series, domain)) WITHOUT ROWID;
    PRAGMA user_version = 1;`;
  writeOldFile(path, schema, null, (db, domain, names) => {
    const row = JSON.stringify(company(domain, [...names]));
    db.prepare("INSERT INTO listed VALUES ('s1', ?, ?, ?)").run(domain, JSON.stringify(names), row);
  });
}
