/**
 * prospect's own schema in the team database (never `public`: a plain role on PostgreSQL 15 cannot
 * create there), and its migrations: all in one transaction behind an advisory lock, so any number
 * of processes starting at once wait for the first and then find the work done. A database written
 * by a newer prospect is refused (exit 2), never misread or changed behind older clients' backs.
 */
import { UsageError } from '../../../exit-codes.js';
import type { PgSession, Query } from './session.js';

export const SCHEMA = 'prospect';
export const SCHEMA_VERSION = 2;
/** The advisory lock key of the migrations (an arbitrary constant: "prsp" in ASCII). */
const MIGRATION_LOCK = 0x70727370;

/** Each step takes the schema from version index to index + 1. */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE ${SCHEMA}.verifications (
    ledger text NOT NULL,
    email_hash bytea NOT NULL,
    status text NOT NULL,
    -- As the service wrote it: a result read back is the same text as the one paid for.
    verified_at text NOT NULL,
    run_id text,
    token text,
    PRIMARY KEY (ledger, email_hash)
  );
  CREATE INDEX verifications_run ON ${SCHEMA}.verifications (ledger, run_id) WHERE run_id IS NOT NULL;
  CREATE TABLE ${SCHEMA}.claims (
    ledger text NOT NULL,
    email_hash bytea NOT NULL,
    token text NOT NULL,
    holder_pid integer NOT NULL,
    holder_host text NOT NULL,
    lease_until timestamptz NOT NULL,
    PRIMARY KEY (ledger, email_hash)
  );
  CREATE TABLE ${SCHEMA}.jobs (
    name text PRIMARY KEY,
    holder_host text,
    holder_pid integer,
    started_at timestamptz,
    checkpoint jsonb,
    publishing jsonb
  );
  CREATE TABLE ${SCHEMA}.job_chunks (
    job text NOT NULL,
    run_id text NOT NULL,
    file text NOT NULL,
    seq integer NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (job, run_id, file, seq)
  );
  CREATE TABLE ${SCHEMA}.exported (
    key bytea PRIMARY KEY,
    job text NOT NULL,
    run_id text NOT NULL
  );
  CREATE INDEX exported_run ON ${SCHEMA}.exported (job, run_id);
  CREATE TABLE ${SCHEMA}.runs (
    job text NOT NULL,
    run_id text NOT NULL,
    finished_at timestamptz NOT NULL,
    record jsonb NOT NULL,
    PRIMARY KEY (job, run_id)
  );
  `,
  // 2: a claim's holder is a client session, not a server process: through a session-mode pool a dead
  // holder's server process lives on and serves the next client, which must not take it for the holder.
  `ALTER TABLE ${SCHEMA}.claims ADD COLUMN holder_session text`,
];

/** The schema at SCHEMA_VERSION: a quick look first, the locked migration only when it is behind. */
export async function migrate(session: PgSession): Promise<void> {
  const found = await session.exclusive((query) => versionOf(query));
  if (found === SCHEMA_VERSION) return;
  if (found !== undefined && found > SCHEMA_VERSION) throw newerSchema(session, found);
  await session.transaction(async (query) => {
    await query('SELECT pg_catalog.pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`);
    await query(
      `CREATE TABLE IF NOT EXISTS ${SCHEMA}.meta
        (one boolean PRIMARY KEY DEFAULT true CHECK (one), version integer NOT NULL)`,
    );
    const version = (await versionOf(query)) ?? 0;
    if (version > SCHEMA_VERSION) throw newerSchema(session, version);
    for (let step = version; step < SCHEMA_VERSION; step += 1) await query(MIGRATIONS[step]!);
    await query(
      `INSERT INTO ${SCHEMA}.meta (one, version) VALUES (true, $1)
       ON CONFLICT (one) DO UPDATE SET version = EXCLUDED.version`,
      [SCHEMA_VERSION],
    );
  });
}

/** The schema's version; undefined before the first migration. */
export async function versionOf(query: Query): Promise<number | undefined> {
  try {
    const { rows } = await query(`SELECT version FROM ${SCHEMA}.meta`);
    return rows[0] === undefined ? undefined : Number(rows[0].version);
  } catch (error) {
    // 42P01: no such table; 3F000: no such schema. Anything else (a privilege) is for the caller.
    const code = (error as { code?: string }).code;
    if (code === '42P01' || code === '3F000') return undefined;
    throw error;
  }
}

function newerSchema(session: PgSession, version: number): UsageError {
  return new UsageError(
    `the state database ${session.url.shown} was written by a newer prospect ` +
      `(schema ${version}; this one knows ${SCHEMA_VERSION}).`,
    'Upgrade prospect on this machine to the version the rest of the team runs; nothing was changed.',
  );
}
