/**
 * `prospect forget` in the team database: each address a keyed hash (team-key.ts suppressionHash),
 * so every machine with the team key finds it and nobody reading the database can read it back.
 */
import type { SuppressionStore } from '../types.js';
import { SCHEMA } from './schema.js';
import type { PgSession } from './session.js';
import type { TeamKeys } from './team-key.js';

export function pgSuppressions(session: PgSession, keys: TeamKeys, host: string): SuppressionStore {
  return {
    hash: (emailKey) => keys.suppressionHash(emailKey).toString('hex'),
    async add(emailKeys) {
      if (emailKeys.length === 0) return 0;
      const hashes = [...new Set(emailKeys)].map((key) => keys.suppressionHash(key)).sort(Buffer.compare);
      const { rowCount } = await session.query(
        `INSERT INTO ${SCHEMA}.suppressed (email_hash, added_by)
         SELECT h, $2 FROM pg_catalog.unnest($1::bytea[]) AS t(h) ON CONFLICT (email_hash) DO NOTHING`,
        [hashes, host],
      );
      return rowCount ?? 0;
    },
    async hashes() {
      const { rows } = await session.query(`SELECT email_hash FROM ${SCHEMA}.suppressed`);
      return new Set((rows as { email_hash: Buffer }[]).map((row) => row.email_hash.toString('hex')));
    },
  };
}
