/**
 * The snapshots of listings walked with `--state pg:NAME`, shared by the team: every machine compares
 * with the team's last complete snapshot of the same filters (snapshot_heads), replaced only by a
 * compare-and-set on its id, so two machines walking the same filters at once do not both replace it.
 * A walk writes its pending snapshot as it goes, under a session advisory lock on its id: a walk that
 * dies frees it, and the next one drops what it left. A diff reads only a published snapshot; a
 * replaced one stays while a walk that compares with it holds a shared lock on it.
 */
import { randomUUID } from 'node:crypto';
import type { ObservedCompany, PendingCompany, SnapshotInfo, SnapshotSeries, SnapshotStore } from '../types.js';
import { SCHEMA } from './schema.js';
import type { PgSession } from './session.js';
import type { TeamKeys } from './team-key.js';

/** The advisory lock class of snapshots (the key is the snapshot id's hash). */
const SNAPSHOT_LOCK_CLASS = 0x736e70;
const GONE_BATCH = 1000;

interface StoredCompany {
  domain: string;
  technologies: string[];
  row: string;
  firstSeen: string;
  technologyFirstSeen: Record<string, string>;
}

export class PgSnapshotStore implements SnapshotStore {
  constructor(
    private readonly session: PgSession,
    private readonly job: string,
    private readonly host: string,
    private readonly keys: TeamKeys,
  ) {}

  async openSeries(key: string, takenAt: string, resumeId?: string): Promise<SnapshotSeries> {
    const series = this.keys.domainHash(`series\n${key}`);
    const adopted = resumeId === undefined ? undefined : await this.adopt(series, resumeId);
    // This session's own locks do not stop it: what it has just taken over is spared by name.
    await dropUnused(this.session, this.job, adopted ? [adopted.id, adopted.previous?.id] : []);
    if (adopted)
      return new PgSeries(
        this.session,
        this.keys,
        this.job,
        series,
        adopted.id,
        adopted.takenAt,
        adopted.previous,
        true,
      );
    const pending = resumeId ?? randomUUID();
    const previous = await this.session.transaction(async (query) => {
      const { rows } = await query(
        `SELECT s.id, s.taken_at, s.source FROM ${SCHEMA}.snapshot_heads h
           JOIN ${SCHEMA}.snapshots s ON s.id = h.snapshot_id WHERE h.job = $1 AND h.series = $2`,
        [this.job, series],
      );
      const head = rows[0] as { id: string; taken_at: string; source: string | null } | undefined;
      // Shared: a walk that publishes meanwhile may mark it replaced, but not drop it under this diff.
      if (head)
        await query('SELECT pg_catalog.pg_advisory_lock_shared($1, pg_catalog.hashtext($2))', [
          SNAPSHOT_LOCK_CLASS,
          head.id,
        ]);
      await query('SELECT pg_catalog.pg_advisory_lock($1, pg_catalog.hashtext($2))', [SNAPSHOT_LOCK_CLASS, pending]);
      await query(
        `INSERT INTO ${SCHEMA}.snapshots (id, job, series, taken_at, status, compares_with, holder_host, holder_pid)
           VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7)`,
        [pending, this.job, series, takenAt, head?.id ?? null, this.host, process.pid],
      );
      return head === undefined ? undefined : { id: head.id, takenAt: head.taken_at, source: head.source ?? undefined };
    });
    return new PgSeries(this.session, this.keys, this.job, series, pending, takenAt, previous, false);
  }

  /**
   * The pending snapshot of the run being resumed, taken over (its walk died, so its lock is free),
   * with a shared lock on the snapshot it compares with, if that is still there.
   */
  private async adopt(
    series: Buffer,
    id: string,
  ): Promise<{ id: string; takenAt: string; previous: SnapshotInfo | undefined } | undefined> {
    return this.session.transaction(async (query) => {
      const found = await query(
        `SELECT taken_at, compares_with FROM ${SCHEMA}.snapshots
           WHERE id = $1 AND job = $2 AND series = $3 AND status = 'pending'`,
        [id, this.job, series],
      );
      const pending = found.rows[0] as { taken_at: string; compares_with: string | null } | undefined;
      if (pending === undefined) return undefined;
      const taken = await query('SELECT pg_catalog.pg_try_advisory_lock($1, pg_catalog.hashtext($2)) AS taken', [
        SNAPSHOT_LOCK_CLASS,
        id,
      ]);
      if (taken.rows[0]?.taken !== true) return undefined;
      if (pending.compares_with === null) return { id, takenAt: pending.taken_at, previous: undefined };
      await query('SELECT pg_catalog.pg_advisory_lock_shared($1, pg_catalog.hashtext($2))', [
        SNAPSHOT_LOCK_CLASS,
        pending.compares_with,
      ]);
      const { rows } = await query(
        `SELECT taken_at, source FROM ${SCHEMA}.snapshots WHERE id = $1 AND status IN ('complete', 'replaced')`,
        [pending.compares_with],
      );
      const previous = rows[0] as { taken_at: string; source: string | null } | undefined;
      if (previous === undefined) {
        // What it compared with is gone: its pages cannot be finished against it; it starts over.
        await dropSnapshot(query, id, "status = 'pending'");
        await query('SELECT pg_catalog.pg_advisory_unlock($1, pg_catalog.hashtext($2))', [SNAPSHOT_LOCK_CLASS, id]);
        await query('SELECT pg_catalog.pg_advisory_unlock_shared($1, pg_catalog.hashtext($2))', [
          SNAPSHOT_LOCK_CLASS,
          pending.compares_with,
        ]);
        return undefined;
      }
      const info = { id: pending.compares_with, takenAt: previous.taken_at, source: previous.source ?? undefined };
      return { id, takenAt: pending.taken_at, previous: info };
    });
  }

  close(): void {}
}

/**
 * Pending snapshots whose walk has died (their lock is free) and replaced ones no walk compares
 * with (no shared lock on them): each dropped under its own lock, taken only if free.
 */
async function dropUnused(session: PgSession, job: string, spared: ReadonlyArray<string | undefined>): Promise<void> {
  const { rows } = await session.query(
    `SELECT id FROM ${SCHEMA}.snapshots WHERE job = $1 AND status IN ('pending', 'replaced')`,
    [job],
  );
  for (const { id } of rows as { id: string }[]) {
    if (spared.includes(id)) continue;
    await session.transaction(async (query) => {
      const taken = await query('SELECT pg_catalog.pg_try_advisory_xact_lock($1, pg_catalog.hashtext($2)) AS taken', [
        SNAPSHOT_LOCK_CLASS,
        id,
      ]);
      if (taken.rows[0]?.taken !== true) return;
      await dropSnapshot(query, id, "status IN ('pending', 'replaced')");
    });
  }
}

type Query = Parameters<Parameters<PgSession['transaction']>[0]>[0];

async function dropSnapshot(query: Query, id: string, condition: string): Promise<void> {
  const { rowCount } = await query(`DELETE FROM ${SCHEMA}.snapshots WHERE id = $1 AND ${condition}`, [id]);
  if (rowCount) await query(`DELETE FROM ${SCHEMA}.snapshot_companies WHERE snapshot_id = $1`, [id]);
}

class PgSeries implements SnapshotSeries {
  private settled = false;
  readonly keepsObservations = true;

  constructor(
    private readonly session: PgSession,
    private readonly keys: TeamKeys,
    private readonly job: string,
    private readonly series: Buffer,
    private readonly pending: string,
    readonly takenAt: string,
    readonly previous: SnapshotInfo | undefined,
    readonly resumed: boolean,
  ) {}

  async lookup(domains: string[]): Promise<Map<string, ObservedCompany>> {
    const byHash = new Map(domains.map((domain) => [this.domainHash(domain).toString('hex'), domain]));
    const { rows } = await this.session.query(
      `SELECT s.domain_hash, s.data AS seen, l.data AS listed FROM ${SCHEMA}.snapshot_seen s
         LEFT JOIN ${SCHEMA}.snapshot_companies l ON l.snapshot_id = $1 AND l.domain_hash = s.domain_hash
         WHERE s.job = $2 AND s.series = $3 AND s.domain_hash = ANY($4::bytea[])`,
      [this.previous?.id ?? '', this.job, this.series, [...byHash.keys()].map((hex) => Buffer.from(hex, 'hex'))],
    );
    const found = new Map<string, ObservedCompany>();
    for (const row of rows as { domain_hash: Buffer; seen: Buffer; listed: Buffer | null }[]) {
      const seen = this.unseal(row.domain_hash, row.seen);
      const listed = row.listed === null ? undefined : this.unseal(row.domain_hash, row.listed);
      found.set(seen.domain, observed(seen, listed));
    }
    return found;
  }

  async add(companies: PendingCompany[]): Promise<void> {
    if (companies.length === 0) return;
    const hashes = companies.map((company) => this.domainHash(company.domain));
    const data = companies.map((company, index) =>
      this.keys.sealSnapshot(Buffer.from(JSON.stringify(company)), this.context(hashes[index]!)),
    );
    await this.session.query(
      `INSERT INTO ${SCHEMA}.snapshot_companies (snapshot_id, domain_hash, data)
         SELECT $1, h, d FROM ROWS FROM (pg_catalog.unnest($2::bytea[]), pg_catalog.unnest($3::bytea[])) AS n(h, d)
         ON CONFLICT (snapshot_id, domain_hash) DO UPDATE SET data = EXCLUDED.data`,
      [this.pending, hashes, data],
    );
  }

  async *gone(): AsyncGenerator<ObservedCompany[]> {
    if (this.previous === undefined) return;
    let after: Buffer = Buffer.alloc(0);
    for (;;) {
      const { rows } = await this.session.query(
        `SELECT p.domain_hash, p.data FROM ${SCHEMA}.snapshot_companies p
           WHERE p.snapshot_id = $1 AND p.domain_hash > $2 AND NOT EXISTS
             (SELECT 1 FROM ${SCHEMA}.snapshot_companies c WHERE c.snapshot_id = $3 AND c.domain_hash = p.domain_hash)
           ORDER BY p.domain_hash LIMIT ${GONE_BATCH}`,
        [this.previous.id, after, this.pending],
      );
      const page = rows as { domain_hash: Buffer; data: Buffer }[];
      if (page.length === 0) return;
      yield page.map((row) => {
        const company = this.unseal(row.domain_hash, row.data);
        return observed(company, company);
      });
      after = page.at(-1)!.domain_hash;
    }
  }

  async publish(source: string | undefined): Promise<boolean> {
    this.settled = true;
    const published = await this.session.transaction(async (query) => {
      // Compare-and-set on the published id: a walk of the same filters that published first wins.
      const swapped =
        this.previous === undefined
          ? await query(
              `INSERT INTO ${SCHEMA}.snapshot_heads (job, series, snapshot_id) VALUES ($1, $2, $3)
                 ON CONFLICT (job, series) DO NOTHING`,
              [this.job, this.series, this.pending],
            )
          : await query(
              `UPDATE ${SCHEMA}.snapshot_heads SET snapshot_id = $3
                 WHERE job = $1 AND series = $2 AND snapshot_id = $4`,
              [this.job, this.series, this.pending, this.previous.id],
            );
      if (swapped.rowCount !== 1) return false;
      await query(`UPDATE ${SCHEMA}.snapshots SET status = 'complete', source = $2 WHERE id = $1`, [
        this.pending,
        source ?? null,
      ]);
      if (this.previous)
        await query(`UPDATE ${SCHEMA}.snapshots SET status = 'replaced' WHERE id = $1`, [this.previous.id]);
      await query(
        `INSERT INTO ${SCHEMA}.snapshot_seen (job, series, domain_hash, data)
           SELECT $1, $2, domain_hash, data FROM ${SCHEMA}.snapshot_companies WHERE snapshot_id = $3
           ON CONFLICT (job, series, domain_hash) DO UPDATE SET data = EXCLUDED.data`,
        [this.job, this.series, this.pending],
      );
      return true;
    });
    if (!published) await this.drop();
    await this.unlock();
    // The snapshot it replaced goes now, unless a walk still compares with it.
    await dropUnused(this.session, this.job, []);
    return published;
  }

  async abandon(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    await this.drop();
    await this.unlock();
  }

  private async drop(): Promise<void> {
    await this.session.transaction((query) => dropSnapshot(query, this.pending, "status = 'pending'"));
  }

  /** The locks of this walk: its pending snapshot's, and the shared one on the snapshot it compared with. */
  private async unlock(): Promise<void> {
    await this.session.query('SELECT pg_catalog.pg_advisory_unlock($1, pg_catalog.hashtext($2))', [
      SNAPSHOT_LOCK_CLASS,
      this.pending,
    ]);
    if (this.previous)
      await this.session.query('SELECT pg_catalog.pg_advisory_unlock_shared($1, pg_catalog.hashtext($2))', [
        SNAPSHOT_LOCK_CLASS,
        this.previous.id,
      ]);
  }

  private domainHash(domain: string): Buffer {
    return this.keys.domainHash(`${this.job}\n${this.series.toString('hex')}\n${domain}`);
  }

  /** A company's sealed data is bound to its job, series and domain: another row's bytes do not open here. */
  private context(hash: Buffer): string {
    return `snapshot\n${this.job}\n${this.series.toString('hex')}\n${hash.toString('hex')}`;
  }

  private unseal(hash: Buffer, data: Buffer): StoredCompany {
    return JSON.parse(this.keys.openSnapshot(data, this.context(hash)).toString('utf8')) as StoredCompany;
  }
}

function observed(seen: StoredCompany, listed: StoredCompany | undefined): ObservedCompany {
  return {
    domain: seen.domain,
    firstSeen: seen.firstSeen,
    technologyFirstSeen: seen.technologyFirstSeen,
    previous: listed === undefined ? undefined : { technologies: listed.technologies, row: listed.row },
  };
}
