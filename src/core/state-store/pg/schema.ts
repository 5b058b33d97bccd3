/**
 * prospect's own schema in the team database (never `public`: a plain role on PostgreSQL 15 cannot
 * create there), and its migrations: all in one transaction behind an advisory lock, so any number
 * of processes starting at once wait for the first and then find the work done. A database written
 * by a newer prospect is refused (exit 2), never misread or changed behind older clients' backs.
 */
import { UsageError } from '../../../exit-codes.js';
import { SCHEMA, type PgSession, type Query } from './session.js';
import type { TeamKeys } from './team-key.js';

export { SCHEMA };
export const SCHEMA_VERSION = 6;
/** The advisory lock key of the migrations (an arbitrary constant: "prsp" in ASCII). */
const MIGRATION_LOCK = 0x70727370;

type Migration = string | ((query: Query, keys: TeamKeys) => Promise<void>);

/** Each step takes the schema from version index to index + 1. */
const MIGRATIONS: readonly Migration[] = [
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
  // 3: every hash keyed with the team key, every stored page sealed with it (team-key.ts).
  keyWithTeamKey,
  // 4: the write-ahead record of paid calls, committed before each is sent, so a resume counts what a
  // killed run may have spent beyond the answers it kept.
  `CREATE TABLE ${SCHEMA}.sent (
    ledger text NOT NULL,
    run_id text NOT NULL,
    email_hash bytea NOT NULL,
    calls integer NOT NULL,
    PRIMARY KEY (ledger, run_id, email_hash)
  )`,
  // 5: the snapshots of listings, for --changes (issue 45): series and domains keyed with the team key,
  // each company's row sealed with it; dates, states and the crawl's name in clear.
  `CREATE TABLE ${SCHEMA}.snapshots (
    id text PRIMARY KEY,
    job text NOT NULL,
    series bytea NOT NULL,
    taken_at text NOT NULL,
    source text,
    status text NOT NULL CHECK (status IN ('pending', 'complete', 'replaced')),
    compares_with text,
    holder_host text NOT NULL,
    holder_pid integer NOT NULL
  );
  CREATE TABLE ${SCHEMA}.snapshot_heads (
    job text NOT NULL,
    series bytea NOT NULL,
    snapshot_id text NOT NULL,
    PRIMARY KEY (job, series)
  );
  CREATE TABLE ${SCHEMA}.snapshot_companies (
    snapshot_id text NOT NULL,
    domain_hash bytea NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (snapshot_id, domain_hash)
  );
  CREATE TABLE ${SCHEMA}.snapshot_seen (
    job text NOT NULL,
    series bytea NOT NULL,
    domain_hash bytea NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (job, series, domain_hash)
  )`,
  // 6: `prospect forget`'s standing suppressions, and which run exported which address (`prospect
  // provenance`), each address keyed with the team key (team-key.ts), never the address.
  `CREATE TABLE ${SCHEMA}.suppressed (
    email_hash bytea PRIMARY KEY,
    added_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    added_by text NOT NULL
  );
  CREATE TABLE ${SCHEMA}.exported_addresses (
    email_hash bytea NOT NULL,
    job text NOT NULL,
    run_id text NOT NULL,
    last_seen text,
    PRIMARY KEY (email_hash, job, run_id)
  );`,
];

/**
 * Schema 2 kept unkeyed digests (a reader with a list of addresses could find each one) and pages in
 * clear: each row is re-keyed from what it holds, and the database records which key did it.
 */
async function keyWithTeamKey(query: Query, keys: TeamKeys): Promise<void> {
  await query(`ALTER TABLE ${SCHEMA}.meta ADD COLUMN team_key_check bytea`);
  for (const table of ['verifications', 'claims']) {
    const { rows } = await query(`SELECT DISTINCT email_hash FROM ${SCHEMA}.${table}`);
    const old = (rows as { email_hash: Buffer }[]).map((row) => row.email_hash);
    await rekey(
      query,
      `${table} SET email_hash`,
      'email_hash',
      old,
      old.map((hash) => keys.rekeyAddress(hash)),
    );
  }
  const { rows } = await query(`SELECT key FROM ${SCHEMA}.exported`);
  const old = (rows as { key: Buffer }[]).map((row) => row.key);
  await rekey(
    query,
    'exported SET key',
    'key',
    old,
    old.map((key) => keys.leadHash(key)),
  );
  const chunks = await query(`SELECT job, run_id, file, seq, data FROM ${SCHEMA}.job_chunks`);
  for (const chunk of chunks.rows as StoredChunk[])
    await query(`UPDATE ${SCHEMA}.job_chunks SET data = $5 WHERE job = $1 AND run_id = $2 AND file = $3 AND seq = $4`, [
      chunk.job,
      chunk.run_id,
      chunk.file,
      chunk.seq,
      keys.seal(chunk.data, chunkContext(chunk)),
    ]);
  await query(`UPDATE ${SCHEMA}.meta SET team_key_check = $1`, [keys.check]);
}

async function rekey(query: Query, set: string, column: string, old: Buffer[], keyed: Buffer[]): Promise<void> {
  if (old.length === 0) return;
  await query(
    `UPDATE ${SCHEMA}.${set} = n.keyed
      FROM ROWS FROM (pg_catalog.unnest($1::bytea[]), pg_catalog.unnest($2::bytea[])) AS n(old, keyed)
      WHERE ${column} = n.old`,
    [old, keyed],
  );
}

export interface StoredChunk {
  job: string;
  run_id: string;
  file: string;
  seq: number;
  data: Buffer;
}

/** What a sealed page is bound to: another place's bytes do not open here. */
export function chunkContext(chunk: Omit<StoredChunk, 'data'>): string {
  return `${chunk.job}\n${chunk.run_id}\n${chunk.file}\n${chunk.seq}`;
}

/**
 * Refuses (exit 2) a team key other than the one that wrote the database: its hashes would match none
 * of the team's, so every address would be paid again and every lead be new.
 */
export async function checkTeamKey(session: PgSession, keys: TeamKeys): Promise<void> {
  const { rows } = await session.query(
    `UPDATE ${SCHEMA}.meta SET team_key_check = COALESCE(team_key_check, $1) RETURNING team_key_check`,
    [keys.check],
  );
  const check = (rows[0] as { team_key_check: Buffer } | undefined)?.team_key_check;
  if (check !== undefined && !check.equals(keys.check))
    throw new UsageError(
      `the team key on this machine is not the one the state database ${session.url.shown} was set up with: ` +
        'no result or lead of the team would be found, and every address would be paid for again.',
      'Set the key the other machines of the team use (PROSPECT_TEAM_KEY or `prospect config set team-key`); ' +
        'see docs/team.md.',
    );
}

/** The schema at SCHEMA_VERSION: a quick look first, the locked migration only when it is behind. */
export async function migrate(session: PgSession, keys: TeamKeys): Promise<void> {
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
    for (let step = version; step < SCHEMA_VERSION; step += 1) {
      const migration = MIGRATIONS[step]!;
      if (typeof migration === 'string') await query(migration);
      else await migration(query, keys);
    }
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
