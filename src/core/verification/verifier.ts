import type { ProspectClient } from '../../api/index.js';
import { Semaphore } from '../ordered-pool.js';
import type { VerifyCache } from './cache.js';

/** The `verification` column: the service's status, or why there is none. */
export const NOT_CHECKED = 'unchecked';

export interface VerificationOutcome {
  verification: string;
  verified_at: string | null;
  /** Where the answer came from; drives the summary's counts. */
  from: 'service' | 'cache' | 'budget';
}

export interface VerificationRun {
  /** Units the run may still spend; Infinity without a budget. */
  budget: number;
  unitsSpent: number;
  fromCache: number;
  unchecked: number;
}

export function newVerificationRun(budget: number | undefined): VerificationRun {
  return { budget: budget ?? Number.POSITIVE_INFINITY, unitsSpent: 0, fromCache: 0, unchecked: 0 };
}

/**
 * Verifies addresses (already syntax-checked and keyed) at most once each: the cache first, then
 * the service while the budget lasts. Concurrent requests for one address share one paid call.
 */
export class Verifier {
  private readonly inFlight = new Map<string, Promise<VerificationOutcome>>();
  private readonly slots: Semaphore;

  constructor(
    private readonly client: Pick<ProspectClient, 'verify'>,
    private readonly cache: VerifyCache,
    readonly run: VerificationRun,
    concurrency: number,
    /** A pipeline run's id: its own earlier results (before a crash) count as spent, not as cached. */
    private readonly runId?: string,
    /** False with --no-cache: only this run's own results are reused. */
    private readonly reuseCached = true,
  ) {
    this.slots = new Semaphore(concurrency);
  }

  verify(key: string, email: string): Promise<VerificationOutcome> {
    const existing = this.inFlight.get(key);
    if (existing) return existing;
    const outcome = this.resolve(key, email);
    this.inFlight.set(key, outcome);
    return outcome;
  }

  private async resolve(key: string, email: string): Promise<VerificationOutcome> {
    const cached = this.cache.get(key);
    // Paid by this same run before it was interrupted: already counted in unitsSpent (see openVerifier).
    if (cached && this.runId !== undefined && cached.run === this.runId) {
      return { verification: cached.status, verified_at: cached.verified_at, from: 'service' };
    }
    if (cached && this.reuseCached) {
      this.run.fromCache += 1;
      return { verification: cached.status, verified_at: cached.verified_at, from: 'cache' };
    }
    // The budget is reserved before the call, so concurrent calls can never overspend it.
    if (this.run.unitsSpent >= this.run.budget) {
      this.run.unchecked += 1;
      return { verification: NOT_CHECKED, verified_at: null, from: 'budget' };
    }
    this.run.unitsSpent += 1;
    const result = await this.slots.run(() => this.client.verify(email, this.runId ? { idempotencyKey: `${this.runId}:${key}` } : undefined));
    const verifiedAt = result.checked_at ?? new Date().toISOString();
    this.cache.put(key, { email, status: result.status, verified_at: verifiedAt, run: this.runId });
    return { verification: result.status, verified_at: verifiedAt, from: 'service' };
  }
}
