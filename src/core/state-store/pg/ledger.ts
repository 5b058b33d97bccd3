/**
 * The team's paid-verification ledger. An address is claimed before it is paid for: a row inserted
 * with ON CONFLICT and a lease, then looked at again. The claim's token is the paid call's
 * Idempotency-Key and survives a takeover, so a run that died after paying costs nothing more with a
 * service that honours the key. Addresses are kept only as hashes keyed with the team key (team-key.ts):
 * equality is all the ledger needs, and a reader of the database cannot tell which address a row is.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { VerificationResult, VerificationClaim, VerificationLedger } from '../types.js';
import { SCHEMA } from './schema.js';
import type { PgSession } from './session.js';
import type { TeamKeys } from './team-key.js';

/** A claim's lease; a live holder renews it, and a holder whose session ended loses it at once. */
const LEASE_SECONDS = 60;
const RENEW_MS = 20_000;
/** How often a run waiting on another run's paid call looks again. */
const CLAIM_POLL_MS = 25;

interface StoredRow {
  email_hash: Buffer;
  status: string;
  verified_at: string;
  run_id: string | null;
}

export class PgVerificationLedger implements VerificationLedger {
  readonly shared = true;
  private readonly entries = new Map<string, VerificationResult>();
  private readonly held = new Set<string>();
  /** ownRun's write-ahead record: calls sent per address hash (hex), as read at open and sent since. */
  private readonly sent = new Map<string, number>();
  private renewal: NodeJS.Timeout | undefined;

  private constructor(
    private readonly session: PgSession,
    private readonly ledger: string,
    private readonly host: string,
    private readonly freshSince: Date,
    private readonly ownRun: string | undefined,
    private readonly keys: TeamKeys,
  ) {}

  /** The ledger `ledger` (one per service and API key), its fresh results (and `ownRun`'s, whatever their age) read. */
  static async open(
    session: PgSession,
    ledger: string,
    options: { host: string; keys: TeamKeys; freshSince: Date; ownRun?: string | undefined },
  ): Promise<PgVerificationLedger> {
    const { host, freshSince, ownRun, keys } = options;
    const opened = new PgVerificationLedger(session, ledger, host, freshSince, ownRun, keys);
    const { rows } = await session.query(
      `SELECT email_hash, status, verified_at, run_id FROM ${SCHEMA}.verifications
        WHERE ledger = $1 AND (verified_at::timestamptz >= $2 OR run_id = $3)`,
      [ledger, options.freshSince, options.ownRun ?? null],
    );
    for (const row of rows as StoredRow[]) opened.take(row);
    if (ownRun !== undefined) {
      const sent = await session.query(
        `SELECT email_hash, calls FROM ${SCHEMA}.sent WHERE ledger = $1 AND run_id = $2`,
        [ledger, ownRun],
      );
      for (const row of sent.rows as { email_hash: Buffer; calls: number }[])
        opened.sent.set(row.email_hash.toString('hex'), row.calls);
    }
    return opened;
  }

  failed(): Error | undefined {
    return this.session.lossError();
  }

  get(key: string): VerificationResult | undefined {
    return this.entries.get(this.hash(key).toString('hex'));
  }

  remember(key: string, result: VerificationResult): void {
    this.entries.set(this.hash(key).toString('hex'), result);
  }

  countPaidBy(runId: string): number {
    let count = 0;
    for (const entry of this.entries.values()) if (entry.run === runId) count += 1;
    return count;
  }

  /**
   * The write-ahead record of a paid call by the pipeline run `run`, committed before the call is
   * sent: a run killed before its answer is kept still counts it on resume (sentBy). A call outside
   * a pipeline run has no resume to tell, and is not recorded.
   */
  async recordSending(key: string, run: string | undefined): Promise<void> {
    if (run === undefined) return;
    const hash = this.hash(key);
    await this.session.query(
      `INSERT INTO ${SCHEMA}.sent AS s (ledger, run_id, email_hash, calls) VALUES ($1, $2, $3, 1)
       ON CONFLICT (ledger, run_id, email_hash) DO UPDATE SET calls = s.calls + 1`,
      [this.ledger, run, hash],
    );
    if (run === this.ownRun) this.sent.set(hash.toString('hex'), (this.sent.get(hash.toString('hex')) ?? 0) + 1);
  }

  /**
   * The calls ownRun sent beyond the answer it kept, per address hash. Keyed by hash (get() finds
   * none of them), so resumeSpend takes each count as it is.
   */
  sentBy(runId: string): ReadonlyMap<string, number> {
    const beyond = new Map<string, number>();
    if (runId !== this.ownRun) return beyond;
    for (const [hex, calls] of this.sent) {
      const unanswered = calls - (this.entries.get(hex)?.run === runId ? 1 : 0);
      if (unanswered > 0) beyond.set(hex, unanswered);
    }
    return beyond;
  }

  /** The result, and the end of the address's claim, in one statement: paid is never seen as still claimed. */
  async put(key: string, result: VerificationResult): Promise<void> {
    const hash = this.hash(key);
    await this.session.query(
      `WITH ended AS (
         DELETE FROM ${SCHEMA}.claims WHERE ledger = $1 AND email_hash = $2 AND holder_session = $6
         RETURNING token)
       INSERT INTO ${SCHEMA}.verifications AS v (ledger, email_hash, status, verified_at, run_id, token)
       VALUES ($1, $2, $3, $4, $5, (SELECT token FROM ended))
       ON CONFLICT (ledger, email_hash) DO UPDATE SET status = EXCLUDED.status, verified_at = EXCLUDED.verified_at,
         run_id = COALESCE(EXCLUDED.run_id, v.run_id), token = COALESCE(EXCLUDED.token, v.token)`,
      [this.ledger, hash, result.status, result.verified_at, result.run ?? null, this.session.id],
    );
    this.held.delete(hash.toString('hex'));
    this.entries.set(hash.toString('hex'), { ...result, email: '' });
  }

  /**
   * Inserts the claim, or takes over one whose lease ran out or whose holder's session is gone
   * (keeping its token); otherwise waits for the holder to finish and tries again.
   */
  async claim(key: string, token: string, signal?: AbortSignal): Promise<VerificationClaim> {
    const hash = this.hash(key);
    for (;;) {
      signal?.throwIfAborted();
      // The claim also reads what was paid before it; refresh() looks again after it, in a statement of its own.
      const { rows } = await this.session.query(
        `WITH claimed AS (
           INSERT INTO ${SCHEMA}.claims AS c
             (ledger, email_hash, token, holder_pid, holder_session, holder_host, lease_until)
           VALUES ($1, $2, $3, pg_catalog.pg_backend_pid(), $8, $4,
             pg_catalog.now() + pg_catalog.make_interval(secs => $5))
           ON CONFLICT (ledger, email_hash) DO UPDATE
             SET holder_pid = EXCLUDED.holder_pid, holder_session = EXCLUDED.holder_session,
                 holder_host = EXCLUDED.holder_host, lease_until = EXCLUDED.lease_until
             WHERE c.lease_until < pg_catalog.now()
                OR NOT EXISTS (SELECT 1 FROM pg_catalog.pg_stat_activity a WHERE a.pid = c.holder_pid)
                -- The holder's server process serves this session now (a session-mode pool): the holder is gone.
                OR (c.holder_pid = pg_catalog.pg_backend_pid() AND c.holder_session IS DISTINCT FROM $8)
           RETURNING token)
         SELECT claimed.token, v.email_hash, v.status, v.verified_at, v.run_id FROM claimed
           LEFT JOIN ${SCHEMA}.verifications v ON v.ledger = $1 AND v.email_hash = $2
             AND (v.verified_at::timestamptz >= $6 OR v.run_id = $7)`,
        [this.ledger, hash, token, this.host, LEASE_SECONDS, this.freshSince, this.ownRun ?? null, this.session.id],
      );
      const row = rows[0] as (StoredRow & { token: string; email_hash: Buffer | null }) | undefined;
      if (row !== undefined) {
        const hex = hash.toString('hex');
        if (row.email_hash !== null) this.take(row);
        this.hold(hex);
        return { token: row.token, release: (answerLost) => this.release(hash, answerLost === true) };
      }
      await sleep(CLAIM_POLL_MS, undefined, { signal });
    }
  }

  /** Looks again at `key` in the database: another run may have paid for it meanwhile. */
  async refresh(key?: string): Promise<void> {
    if (key === undefined) return;
    // Always a statement of its own, after the claim: the claim's statement reads the snapshot it began
    // with, and an INSERT that waited on another run's claim misses the result that run stored meanwhile.
    const { rows } = await this.session.query(
      `SELECT email_hash, status, verified_at, run_id FROM ${SCHEMA}.verifications
        WHERE ledger = $1 AND email_hash = $2 AND (verified_at::timestamptz >= $3 OR run_id = $4)`,
      [this.ledger, this.hash(key), this.freshSince, this.ownRun ?? null],
    );
    for (const row of rows as StoredRow[]) this.take(row);
  }

  close(): void {
    if (this.renewal) clearInterval(this.renewal);
    this.renewal = undefined;
  }

  /**
   * A claim ended without a result. After a lost answer (the call may have been charged) its row and
   * token stay, its lease ended, so whoever pays next sends the same Idempotency-Key; otherwise it goes.
   */
  private async release(hash: Buffer, answerLost: boolean): Promise<void> {
    const hex = hash.toString('hex');
    if (!this.held.delete(hex)) return;
    const statement = answerLost
      ? `UPDATE ${SCHEMA}.claims SET lease_until = '-infinity'
          WHERE ledger = $1 AND email_hash = $2 AND holder_session = $3`
      : `DELETE FROM ${SCHEMA}.claims WHERE ledger = $1 AND email_hash = $2 AND holder_session = $3`;
    await this.session.query(statement, [this.ledger, hash, this.session.id]).catch(() => {});
  }

  private hold(hex: string): void {
    this.held.add(hex);
    this.renewal ??= setInterval(() => {
      if (this.held.size === 0) return;
      this.session
        .query(
          `UPDATE ${SCHEMA}.claims SET lease_until = pg_catalog.now() + pg_catalog.make_interval(secs => $2)
            WHERE ledger = $1 AND holder_session = $3 AND lease_until > pg_catalog.now()`,
          [this.ledger, LEASE_SECONDS, this.session.id],
        )
        .catch(() => {});
    }, RENEW_MS).unref();
  }

  private take(row: StoredRow): void {
    this.entries.set(row.email_hash.toString('hex'), {
      email: '',
      status: row.status,
      verified_at: row.verified_at,
      run: row.run_id ?? undefined,
    });
  }

  private hash(key: string): Buffer {
    return this.keys.addressHash(this.ledger, key);
  }
}
