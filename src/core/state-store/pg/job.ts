/**
 * `pipeline --state pg:NAME`: job NAME's lock, checkpoint, committed bytes, exports and runs in the
 * team database. The lock is a session advisory lock, so a holder that dies frees it at once. Each
 * page is one transaction: its bytes, its lead keys and the checkpoint that covers them. A run
 * resumed anywhere rebuilds its unfinished output from those bytes, so it writes what one
 * uninterrupted run would have. The bytes are sealed with the team key and the lead keys keyed with it
 * (team-key.ts): a run killed before it ends leaves no lead readable in the database.
 */
import { open, writeFile } from 'node:fs/promises';
import { CliError, ExitCode, UsageError } from '../../../exit-codes.js';
import { leadKey } from '../lead-key.js';
import { LockedError } from '../lock.js';
import { runRecordSchema, type LeadFields, type RunRecord, type StoredRunRecord } from '../run-record.js';
import type {
  AddressExport,
  CommittedRun,
  ExportedAddress,
  ExportedBefore,
  ExportsLedger,
  LocalRunFiles,
  RemoteJobState,
} from '../types.js';
import { chunkContext, SCHEMA, type StoredChunk } from './schema.js';
import type { PgSession, Query } from './session.js';
import type { TeamKeys } from './team-key.js';

/** The advisory lock class of pipeline jobs (the key is the job name's hash). */
export const JOB_LOCK_CLASS = 0x6a6f62;

type FileKind = 'output' | 'rows' | 'keys';

export class PgJobState implements RemoteJobState {
  readonly label: string;
  readonly leads: PgExportsLedger;
  private runId: string | undefined;
  /** What the store holds of the unfinished run: bytes per file, and the next chunk number. */
  private committed = { output: 0, keys: 0, seq: 0 };

  constructor(
    private readonly session: PgSession,
    private readonly name: string,
    private readonly host: string,
    private readonly keys: TeamKeys,
  ) {
    this.label = `pg:${name}`;
    this.leads = new PgExportsLedger(session, name, () => this.runId, keys);
  }

  async lock(_command: string, files: LocalRunFiles): Promise<() => Promise<void>> {
    await this.refuseTransactionPooler();
    const { rows } = await this.session.query(
      'SELECT pg_catalog.pg_try_advisory_lock($1, pg_catalog.hashtext($2)) AS taken',
      [JOB_LOCK_CLASS, this.name],
    );
    if (rows[0]?.taken !== true) throw await this.heldBy();
    await this.session.query(
      `INSERT INTO ${SCHEMA}.jobs (name, holder_host, holder_pid, started_at) VALUES ($1, $2, $3, pg_catalog.now())
       ON CONFLICT (name) DO UPDATE SET holder_host = EXCLUDED.holder_host, holder_pid = EXCLUDED.holder_pid,
         started_at = EXCLUDED.started_at`,
      [this.name, `${this.host}`, process.pid],
    );
    await this.restore(files);
    return async () => {
      await this.session
        .query('SELECT pg_catalog.pg_advisory_unlock($1, pg_catalog.hashtext($2))', [JOB_LOCK_CLASS, this.name])
        .catch(() => {});
    };
  }

  beginRun(runId: string): void {
    this.runId = runId;
  }

  async commitPage(files: LocalRunFiles, checkpoint: CommittedRun, checkpointJson: string): Promise<void> {
    const outputFile: FileKind = checkpoint.spooled ? 'rows' : 'output';
    const output = await readRange(
      checkpoint.spooled ? files.rowsPath : files.outputPath,
      this.committed.output,
      checkpoint.output_bytes,
    );
    const keys = await readRange(files.keysPath, this.committed.keys, checkpoint.keys_bytes);
    const keyBuffers = parseKeys(keys.toString('utf8')).map((key) => this.keys.leadHash(key));
    let seq = this.committed.seq;
    await this.session.transaction(async (query) => {
      seq = this.committed.seq;
      for (const [file, data] of [
        [outputFile, output],
        ['keys', keys],
      ] as const) {
        if (data.length === 0) continue;
        const place = { job: this.name, run_id: checkpoint.run_id, file, seq: seq++ };
        await query(`INSERT INTO ${SCHEMA}.job_chunks (job, run_id, file, seq, data) VALUES ($1, $2, $3, $4, $5)`, [
          place.job,
          place.run_id,
          place.file,
          place.seq,
          this.keys.seal(data, chunkContext(place)),
        ]);
      }
      await reserveKeys(query, keyBuffers, this.name, checkpoint.run_id);
      await query(`UPDATE ${SCHEMA}.jobs SET checkpoint = $2 WHERE name = $1`, [this.name, checkpointJson]);
    });
    this.runId = checkpoint.run_id;
    this.committed = { output: checkpoint.output_bytes, keys: checkpoint.keys_bytes, seq };
  }

  async markPublishing(record: RunRecord): Promise<void> {
    await this.session.query(`UPDATE ${SCHEMA}.jobs SET publishing = $2 WHERE name = $1`, [
      this.name,
      JSON.stringify(runRecordSchema.parse(record)),
    ]);
  }

  async discard(): Promise<void> {
    const runId = this.runId;
    await this.session.transaction(async (query) => {
      await query(`UPDATE ${SCHEMA}.jobs SET checkpoint = NULL, publishing = NULL WHERE name = $1`, [this.name]);
      await query(`DELETE FROM ${SCHEMA}.job_chunks WHERE job = $1`, [this.name]);
      if (runId === undefined) return;
      // The run's write-ahead record of paid calls: no resume of it is left to count them.
      await query(`DELETE FROM ${SCHEMA}.sent WHERE run_id = $1`, [runId]);
      // A run dropped unfinished gives back the leads it reserved; a recorded run keeps them exported.
      await query(
        `DELETE FROM ${SCHEMA}.exported e WHERE job = $1 AND run_id = $2
             AND NOT EXISTS (SELECT 1 FROM ${SCHEMA}.runs r WHERE r.job = $1 AND r.run_id = $2)`,
        [this.name, runId],
      );
    });
    this.committed = { output: 0, keys: 0, seq: 0 };
  }

  /** The unfinished run, as the store has it, into the local files (nothing when there is none). */
  private async restore(files: LocalRunFiles): Promise<void> {
    const { rows } = await this.session.query(`SELECT checkpoint, publishing FROM ${SCHEMA}.jobs WHERE name = $1`, [
      this.name,
    ]);
    const job = rows[0] as { checkpoint: CommittedRun | null; publishing: unknown } | undefined;
    if (job?.publishing) await writeFile(files.publishingPath, JSON.stringify(job.publishing), { mode: 0o600 });
    if (!job?.checkpoint) return;
    const checkpoint = job.checkpoint;
    const chunks = await this.session.query(
      `SELECT job, run_id, file, seq, data FROM ${SCHEMA}.job_chunks WHERE job = $1 AND run_id = $2 ORDER BY seq`,
      [this.name, checkpoint.run_id],
    );
    const parts: Record<FileKind, Buffer[]> = { output: [], rows: [], keys: [] };
    let seq = 0;
    for (const chunk of chunks.rows as (StoredChunk & { file: FileKind })[]) {
      parts[chunk.file].push(this.openChunk(chunk));
      seq = chunk.seq + 1;
    }
    const outputKind: FileKind = checkpoint.spooled ? 'rows' : 'output';
    const output = Buffer.concat(parts[outputKind]);
    const keys = Buffer.concat(parts.keys);
    if (output.length !== checkpoint.output_bytes || keys.length !== checkpoint.keys_bytes)
      throw new CliError(
        `the unfinished run of --state ${this.label} is incomplete in the database ` +
          `(${output.length} of ${checkpoint.output_bytes} bytes).`,
        ExitCode.usage,
        `Start over: DELETE FROM ${SCHEMA}.job_chunks WHERE job = '${this.name}'; ` +
          `UPDATE ${SCHEMA}.jobs SET checkpoint = NULL WHERE name = '${this.name}';`,
      );
    await writeFile(checkpoint.spooled ? files.rowsPath : files.outputPath, output, { mode: 0o600 });
    await writeFile(files.keysPath, keys, { mode: 0o600 });
    await writeFile(files.checkpointPath, JSON.stringify(checkpoint), { mode: 0o600 });
    this.runId = checkpoint.run_id;
    this.committed = { output: output.length, keys: keys.length, seq };
  }

  private openChunk(chunk: StoredChunk): Buffer {
    try {
      return this.keys.open(chunk.data, chunkContext(chunk));
    } catch {
      throw new CliError(
        `the unfinished run of --state ${this.label} cannot be read with this team key (page ${chunk.seq} of ` +
          `${chunk.file}).`,
        ExitCode.usage,
        'Set the team key the run was started with, or start over: ' +
          `DELETE FROM ${SCHEMA}.job_chunks WHERE job = '${this.name}'; ` +
          `UPDATE ${SCHEMA}.jobs SET checkpoint = NULL WHERE name = '${this.name}';`,
      );
    }
  }

  /** Who holds the job: exit 6 at once, naming the host and when its run started. */
  async heldBy(): Promise<LockedError> {
    const { rows } = await this.session.query(
      `SELECT holder_host, holder_pid, started_at FROM ${SCHEMA}.jobs WHERE name = $1`,
      [this.name],
    );
    const holder = rows[0] as
      { holder_host: string | null; holder_pid: number | null; started_at: Date | null } | undefined;
    const who = holder?.holder_host
      ? `on ${holder.holder_host} (pid ${holder.holder_pid}, started ${holder.started_at?.toISOString()})`
      : '(just starting)';
    return new LockedError(
      `another pipeline run ${who} holds --state ${this.label}.`,
      'Wait for it to finish, or stop it: its lock goes the moment its process or connection does.',
    );
  }

  /**
   * A pooler in transaction mode (PgBouncer pool_mode=transaction) hands each statement to any
   * server connection: a session advisory lock would be lost between statements. Seen as a
   * backend that changes under one connection.
   */
  private async refuseTransactionPooler(): Promise<void> {
    const { rows } = await this.session.query('SELECT pg_catalog.pg_backend_pid() AS pid');
    if (rows[0]?.pid === this.session.backendPid) return;
    throw new UsageError(
      `the state database ${this.session.url.shown} is reached through a pooler in transaction mode: ` +
        "a job's lock needs one session.",
      'Connect to PostgreSQL directly, or through a session-mode pool (docs/team.md).',
    );
  }
}

/** The store-wide exports ledger: --only-new skips a lead any job of the store exported or holds. */
export class PgExportsLedger implements ExportsLedger {
  /** The keyed hashes of the leads newOnly left out: exportedBefore says whose they were. */
  private readonly skipped: Buffer[] = [];

  constructor(
    private readonly session: PgSession,
    private readonly job: string,
    private readonly runId: () => string | undefined,
    private readonly keys: TeamKeys,
  ) {}

  /**
   * Reserves the rows' leads for this run, then keeps those that no other run holds: two runs
   * asking at once cannot both get a lead (the insert decides).
   */
  async newOnly<Row extends LeadFields>(rows: Row[]): Promise<Row[]> {
    if (rows.length === 0) return rows;
    const runId = this.runId() ?? '';
    const buffers = rows.map((row) => this.keys.leadHash(Buffer.from(leadKey(row), 'hex')));
    const keys = buffers.map((buffer) => buffer.toString('hex'));
    const taken = await this.session.transaction(async (query) => {
      await reserveKeys(query, buffers, this.job, runId);
      const { rows: others } = await query(
        `SELECT key FROM ${SCHEMA}.exported WHERE key = ANY($1::bytea[]) AND NOT (job = $2 AND run_id = $3)`,
        [buffers, this.job, runId],
      );
      return new Set((others as { key: Buffer }[]).map((row) => row.key.toString('hex')));
    });
    if (taken.size === 0) return rows;
    for (const [index, key] of keys.entries()) if (taken.has(key)) this.skipped.push(buffers[index]!);
    return rows.filter((_, index) => !taken.has(keys[index]!));
  }

  async exportedBefore(): Promise<ExportedBefore[]> {
    if (this.skipped.length === 0) return [];
    const { rows } = await this.session.query(
      `SELECT e.job, e.run_id, r.finished_at, count(*)::int AS leads FROM ${SCHEMA}.exported e
         LEFT JOIN ${SCHEMA}.runs r ON r.job = e.job AND r.run_id = e.run_id
        WHERE e.key = ANY($1::bytea[]) GROUP BY e.job, e.run_id, r.finished_at ORDER BY leads DESC, e.job LIMIT 5`,
      [this.skipped],
    );
    return (rows as { job: string; run_id: string; finished_at: Date | null; leads: number }[]).map((row) => ({
      job: `pg:${row.job}`,
      run: row.run_id,
      finishedAt: row.finished_at === null ? undefined : new Date(row.finished_at).toISOString(),
      leads: row.leads,
    }));
  }

  async runThatWrote(path: string): Promise<StoredRunRecord | undefined> {
    const { rows } = await this.session.query(
      `SELECT record FROM ${SCHEMA}.runs WHERE job = $1 AND record->>'output_path' = $2
        ORDER BY finished_at DESC LIMIT 1`,
      [this.job, path],
    );
    const parsed = runRecordSchema.safeParse(rows[0]?.record);
    return parsed.success ? parsed.data : undefined;
  }

  async recordRun(
    record: RunRecord,
    batches: AsyncIterable<Buffer[]>,
    addresses?: AsyncIterable<ExportedAddress[]>,
  ): Promise<number | undefined> {
    const parsed = runRecordSchema.parse(record);
    const keys: Buffer[] = [];
    for await (const batch of batches) for (const key of batch) keys.push(this.keys.leadHash(key));
    const exported = new Map<string, string | null>();
    for await (const batch of addresses ?? [])
      for (const { digest, lastSeen } of batch)
        exported.set(this.keys.provenanceHash(digest).toString('hex'), lastSeen);
    return this.session.transaction(async (query) => {
      const { rowCount } = await query(
        `INSERT INTO ${SCHEMA}.runs (job, run_id, finished_at, record) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
        [this.job, parsed.run_id, parsed.finished_at, JSON.stringify(parsed)],
      );
      if (rowCount === 0) return undefined;
      if (exported.size > 0)
        await query(
          `INSERT INTO ${SCHEMA}.exported_addresses (email_hash, job, run_id, last_seen)
           SELECT pg_catalog.decode(h, 'hex'), $2, $3, s
             FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($4::text[])) AS t(h, s)
           ON CONFLICT DO NOTHING`,
          [[...exported.keys()], this.job, parsed.run_id, [...exported.values()]],
        );
      return reserveKeys(query, keys, this.job, parsed.run_id);
    });
  }

  close(): void {}
}

/** Every recorded export of an address (its addressDigest) by any job of the store, oldest first. */
export async function pgExportsOf(session: PgSession, keys: TeamKeys, digest: Buffer): Promise<AddressExport[]> {
  const { rows } = await session.query(
    `SELECT a.job, a.last_seen, r.record FROM ${SCHEMA}.exported_addresses a
      JOIN ${SCHEMA}.runs r ON r.job = a.job AND r.run_id = a.run_id
      WHERE a.email_hash = $1 ORDER BY r.finished_at`,
    [keys.provenanceHash(digest)],
  );
  return (rows as { job: string; last_seen: string | null; record: unknown }[]).flatMap((row) => {
    const parsed = runRecordSchema.safeParse(row.record);
    return parsed.success ? [{ job: `pg:${row.job}`, lastSeen: row.last_seen, record: parsed.data }] : [];
  });
}

/** Lead keys into the store's ledger, in key order (concurrent transactions then never deadlock on them). */
async function reserveKeys(query: Query, keys: Buffer[], job: string, runId: string): Promise<number> {
  if (keys.length === 0) return 0;
  const sorted = [...keys].sort(Buffer.compare);
  const { rowCount } = await query(
    `INSERT INTO ${SCHEMA}.exported (key, job, run_id)
     SELECT k, $2, $3 FROM pg_catalog.unnest($1::bytea[]) WITH ORDINALITY AS t(k, n) ORDER BY n
     ON CONFLICT (key) DO NOTHING`,
    [sorted, job, runId],
  );
  return rowCount ?? 0;
}

/** The lead keys of a key file's lines (lead-key.ts leadKeyLine): each line's first field. */
function parseKeys(text: string): Buffer[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => Buffer.from(line.split(' ')[0]!, 'hex'));
}

async function readRange(path: string, from: number, to: number): Promise<Buffer> {
  if (to <= from) return Buffer.alloc(0);
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(to - from);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, from);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
