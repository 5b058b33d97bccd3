/**
 * `prospect forget` on this machine: SUPPRESSIONS_FILE in the user's cache directory (beside the
 * verification ledgers), an SQLite database of keyed hashes. The key is a random salt made with the
 * file: the file names no address, and the hashes do not match any other machine's or list's.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../../exit-codes.js';
import { makeDirectoryDurable } from '../../io/atomic-file.js';
import { loadSqlite } from './native-sqlite.js';
import type { SuppressionStore } from './types.js';

const SUPPRESSIONS_FILE = 'suppressions.sqlite';
const SCHEMA_VERSION = 1;
const BUSY_TIMEOUT_MS = 30_000;

/** The local store in `directory`; undefined when `create` is false and no address was ever forgotten here. */
export async function openLocalSuppressions(
  directory: string,
  options: { create: boolean },
): Promise<(SuppressionStore & { close(): void }) | undefined> {
  const path = join(directory, SUPPRESSIONS_FILE);
  const existed = existsSync(path);
  if (!existed && !options.create) return undefined;
  makeDirectoryDurable(directory, 0o700);
  const Database = await loadSqlite();
  const db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  try {
    db.pragma('journal_mode = DELETE');
    db.pragma('synchronous = FULL');
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION)
      throw new UsageError(
        `${path} was written by a newer version of prospect (version ${version}).`,
        'Update prospect: its forgotten addresses must not be ignored.',
      );
    if (version < SCHEMA_VERSION)
      db.transaction(() => {
        db.exec('CREATE TABLE IF NOT EXISTS meta (one INTEGER PRIMARY KEY CHECK (one = 1), salt BLOB NOT NULL)');
        db.exec(
          'CREATE TABLE IF NOT EXISTS suppressed (hash BLOB PRIMARY KEY NOT NULL, added_at TEXT NOT NULL) ' +
            'WITHOUT ROWID',
        );
        db.prepare('INSERT OR IGNORE INTO meta (one, salt) VALUES (1, ?)').run(randomBytes(32));
        db.pragma(`user_version = ${SCHEMA_VERSION}`);
      }).immediate();
  } catch (error) {
    db.close();
    throw error;
  }
  // Hashes only, but the user's alone like the ledgers beside it (SQLite creates files 0644).
  if (!existed) chmodSync(path, 0o600);
  const salt = db.prepare<[], Buffer>('SELECT salt FROM meta').pluck().get()!;
  const hash = (emailKey: string) => createHmac('sha256', salt).update(emailKey).digest();
  const insert = db.prepare<[Buffer, string]>('INSERT OR IGNORE INTO suppressed (hash, added_at) VALUES (?, ?)');
  return {
    hash: (emailKey) => hash(emailKey).toString('hex'),
    async add(emailKeys) {
      const now = new Date().toISOString();
      return db
        .transaction(() => {
          let added = 0;
          for (const key of new Set(emailKeys)) added += insert.run(hash(key), now).changes;
          return added;
        })
        .immediate();
    },
    async hashes() {
      const rows = db.prepare<[], Buffer>('SELECT hash FROM suppressed').pluck().all();
      return new Set(rows.map((row) => row.toString('hex')));
    },
    close: () => db.close(),
  };
}
