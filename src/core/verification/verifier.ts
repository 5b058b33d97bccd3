import { createHash } from 'node:crypto';
import {
  MalformedResponseError,
  RequestError,
  VERDICTS,
  type PaidCallWatch,
  type ProspectClient,
  type Verdict,
  type VerifyAnswer,
} from '../../api/index.js';
import { readVerifyStatus } from '../../api/verify-status.js';
import { Semaphore } from '../../util/ordered-pool.js';
import type { VerificationResult, VerificationClaim, VerificationLedger } from '../state-store/types.js';
import type { AnswerSpool } from './spool.js';

/** The `verification` column: the service's status, or why there is none. */
const NOT_CHECKED = 'unchecked';

export interface VerificationOutcome {
  verification: string;
  verified_at: string | null;
  /** Where the answer came from; drives the summary's counts. */
  from: 'service' | 'cache' | 'budget';
}

export interface VerificationRun {
  /** Units the run may spend in all; Infinity without a budget. */
  budget: number;
  /** Units the service charged: answered paid calls (a resumed run starts from its earlier part's). */
  unitsSpent: number;
  fromCache: number;
  unchecked: number;
  /** Paid attempts whose answer was lost after the request went out (a reset, a timeout, a cut body). */
  answersLost: number;
  /**
   * Units those lost answers may have cost on top of `unitsSpent`: each of them, whatever the service
   * says of Idempotency-Key (contract row 23), and, in a resumed run, each call its killed part sent
   * without recording an answer.
   */
  mayAlsoHaveCost: number;
  /**
   * The service sent Idempotent-Replayed (contract row 27) on an answer of this run: what it says,
   * never believed, since only a second paid call for an answered address could test it.
   */
  idempotencyClaimed: boolean;
  /** Paid calls in flight at most (--concurrency): what a SIGKILL can make a later run pay again. */
  inFlightAtMost: number;
  /** The service's words no vocabulary names, each read as `unknown` (src/api/verify-status.ts), by count. */
  unknownStatuses: Map<string, number>;
  /**
   * The service's own words that are not the verdict they were read as (`deliverable` as valid), with
   * the verdict, by count: what the run record keeps of another vocabulary.
   */
  serviceWords: Map<string, { read_as: string; count: number }>;
  /** Paid answers a failed store could not keep, kept in the local spool instead (spool.ts). */
  spooled: number;
}

export function newVerificationRun(budget: number | undefined, concurrency: number): VerificationRun {
  return {
    budget: budget ?? Number.POSITIVE_INFINITY,
    unitsSpent: 0,
    fromCache: 0,
    unchecked: 0,
    answersLost: 0,
    mayAlsoHaveCost: 0,
    idempotencyClaimed: false,
    inFlightAtMost: concurrency,
    unknownStatuses: new Map(),
    serviceWords: new Map(),
    spooled: 0,
  };
}

/** Where paid results are looked up and kept. */
export interface VerificationStores {
  /** The ledger shared by every command and run for this service and key (disabled with --no-cache). */
  ledger: VerificationLedger;
  /** pipeline --state: the run's own copy, tagged with the run, so a resume never pays twice even with --no-cache. */
  resume?: VerificationLedger | undefined;
  /** Where an answer goes when a store fails to keep it, for the next run to read into the store first. */
  spool?: Pick<AnswerSpool, 'append'> | undefined;
}

export interface VerifierSettings {
  concurrency: number;
  /**
   * Names this run in each paid call's Idempotency-Key (with a hash of the address): a pipeline
   * run's id, so its resume sends the same keys; otherwise a fresh id per run.
   */
  keyScope: string;
  /** A pipeline run's id: its own earlier results (before a crash) count as spent, not as cached. */
  runId?: string | undefined;
  /** False with --no-cache: only this run's own results are reused. */
  reuseCached?: boolean;
  /**
   * The run's stop signal: once aborted no paid call starts, and a wait on another run's paid call
   * ends. A call already sent is not cut by it (see settle): the service may have charged it.
   */
  signal?: AbortSignal | undefined;
  /** verify-statuses: the service's words on top of the known vocabularies, to read kept results with. */
  verifyStatuses?: Readonly<Record<string, Verdict>> | undefined;
}

/**
 * Verifies addresses (already syntax-checked and keyed) at most once each: the ledger first, then
 * the service while the budget lasts. Concurrent requests for one address share one paid call, and
 * runs at the same time on one ledger never both pay for an address (VerificationLedger.claim).
 */
export class Verifier {
  private readonly inFlight = new Map<string, Promise<VerificationOutcome>>();
  private readonly slots: Semaphore;
  /** The addresses the plan pays for (spend-plan.ts: oldest first); undefined: any, while the budget lasts. */
  private payable: ReadonlySet<string> | undefined;
  /** Units charged or promised to calls under way: what the budget is checked against, so no overspend. */
  private reserved: number;
  /** The paid calls under way, for settle(). */
  private readonly paying = new Set<Promise<unknown>>();
  /**
   * The service's refusal of a paid call (a 4xx: the path, method or parameter it does not take, no
   * credits): no paid call is sent after it, and the rest of the run's addresses are left unchecked.
   */
  private refused: RequestError | undefined;
  /**
   * An answer to a paid call that could not be read (a shape the contract does not know): it was
   * likely charged, and so would every other be, so no paid call starts after it.
   */
  private unreadable: RequestError | undefined;
  /**
   * Until one paid answer has been read, paid calls go out one at a time: an endpoint that answers
   * what the client cannot read costs one unit, not --concurrency of them.
   */
  private answerRead = false;
  private readonly firstCall = new Semaphore(1);

  constructor(
    private readonly client: Pick<ProspectClient, 'verify'>,
    private readonly stores: VerificationStores,
    readonly run: VerificationRun,
    private readonly settings: VerifierSettings,
  ) {
    this.slots = new Semaphore(settings.concurrency);
    this.reserved = run.unitsSpent + run.mayAlsoHaveCost;
  }

  /**
   * Waits for the paid calls already under way, so that each answer the service charged for is kept
   * (in the ledger, and the run's state) before a stopped run exits: a resume, or any later run,
   * then finds it instead of paying for it again, even from a service that ignores Idempotency-Key.
   */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.paying]);
  }

  /**
   * The first failure of a store (the ledger, the run's state: a full disk, a lost session), or
   * undefined. From then on no paid call starts and no retry is sent (issue 43): an answer that
   * could not be kept would be paid for again by the next run.
   */
  private storeFailure: { error: unknown } | undefined;

  private async stored<T>(operation: () => Promise<T> | T): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      // A stop (SIGINT, SIGTERM) met by a store call is no store failure: the calls already written
      // ahead still go out and are kept (settle), or the resume would count them as charged.
      const { signal } = this.settings;
      if (!(signal?.aborted && error === signal.reason)) this.storeFailure ??= { error };
      throw error;
    }
  }

  /** Throws the store's failure, latching one the store noticed on its own (a team session the server ended). */
  private throwIfStoreFailed(): void {
    if (this.storeFailure === undefined) {
      const noticed = this.stores.ledger.failed?.() ?? this.stores.resume?.failed?.();
      if (noticed !== undefined) this.storeFailure = { error: noticed };
    }
    if (this.storeFailure !== undefined) throw this.storeFailure.error;
  }

  private storeFailed(): boolean {
    try {
      this.throwIfStoreFailed();
      return false;
    } catch {
      return true;
    }
  }

  /** What the verify endpoint said when it refused a paid call; undefined while it has refused none. */
  get refusal(): RequestError | undefined {
    return this.refused;
  }

  /** Pays only for these addresses from now on (the plan's, oldest first); any other is left unchecked. */
  payOnly(keys: ReadonlySet<string>): void {
    this.payable = keys;
  }

  /** Whether a result for the address is at hand, so verifying it costs nothing. */
  isKnown(key: string): boolean {
    return this.known(key) !== undefined;
  }

  verify(key: string, email: string): Promise<VerificationOutcome> {
    const existing = this.inFlight.get(key);
    if (existing) return existing;
    // Resolved a turn later, so the addresses asked for together are all counted before the
    // consent question reads the counts.
    const outcome = Promise.resolve().then(() => this.resolve(key, email));
    this.inFlight.set(key, outcome);
    return outcome;
  }

  private known(key: string): { result: VerificationResult; ownRun: boolean } | undefined {
    const { runId, reuseCached = true } = this.settings;
    const resumed = this.stores.resume?.get(key);
    // Paid by this same run before it was interrupted: already counted in unitsSpent (see openVerifier).
    if (resumed && runId !== undefined && resumed.run === runId) return { result: resumed, ownRun: true };
    if (!reuseCached) return undefined;
    const cached = resumed ?? this.stores.ledger.get(key);
    return cached ? { result: cached, ownRun: false } : undefined;
  }

  private fromKnown(key: string): VerificationOutcome | undefined {
    const known = this.known(key);
    if (!known) return undefined;
    if (!known.ownRun) this.run.fromCache += 1;
    return {
      verification: this.verdictOf(known.result.status),
      verified_at: known.result.verified_at,
      from: known.ownRun ? 'service' : 'cache',
    };
  }

  private async resolve(key: string, email: string): Promise<VerificationOutcome> {
    const known = this.fromKnown(key);
    if (known) return known;
    this.throwIfStoreFailed();
    if (this.unreadable) throw this.unreadable;
    if (this.refused) return this.leftUnchecked();
    // The budget is reserved before the call, so concurrent calls can never overspend it.
    if (this.reserved >= this.run.budget || this.payable?.has(key) === false) return this.leftUnchecked();
    this.reserved += 1;
    let claim: VerificationClaim | undefined;
    const call: PaidCall = { reserved: 1, lost: 0, refused: false };
    try {
      const { ledger } = this.stores;
      claim = await this.stored(() =>
        ledger.claim(key, idempotencyKeyFor(this.settings.keyScope, key), this.settings.signal),
      );
      // Another run may have paid for it while this one waited for its turn.
      await this.stored(() => ledger.refresh(key));
      const paidMeanwhile = this.settings.reuseCached === false ? undefined : this.stores.ledger.get(key);
      if (paidMeanwhile) {
        this.reserved -= 1;
        this.run.fromCache += 1;
        await this.stores.resume?.put(key, { ...paidMeanwhile, run: undefined });
        const verification = this.verdictOf(paidMeanwhile.status);
        return { verification, verified_at: paidMeanwhile.verified_at, from: 'cache' };
      }
      return await this.tracked(this.pay(key, email, claim.token, call));
    } catch (error) {
      // No answer: what the lost answers may have cost stays reserved; the rest goes back.
      this.run.mayAlsoHaveCost += call.lost;
      this.reserved -= call.reserved - call.lost;
      // The budget had no room for another try after a lost answer: the address is left unchecked.
      if (call.refused || this.isRefusal(error, call)) return this.leftUnchecked();
      throw error;
    } finally {
      await claim?.release(call.lost > 0 && call.answered !== true);
    }
  }

  /**
   * A 4xx answer to a paid call (not 408 or 429, which are the pace) cost nothing (contract row 23) and
   * will be the answer to every other: it stops the paying, and the job keeps its rows, unchecked.
   */
  private isRefusal(error: unknown, call: PaidCall): boolean {
    if (error === this.refused) return true;
    const status = error instanceof RequestError ? error.status : undefined;
    if (status === undefined || status < 400 || status > 499 || status === 408 || status === 429) return false;
    if (call.lost > 0) return false;
    this.refused ??= error as RequestError;
    return true;
  }

  private leftUnchecked(): VerificationOutcome {
    this.run.unchecked += 1;
    return { verification: NOT_CHECKED, verified_at: null, from: 'budget' };
  }

  private async tracked<T>(call: Promise<T>): Promise<T> {
    this.paying.add(call);
    try {
      return await call;
    } finally {
      this.paying.delete(call);
    }
  }

  /**
   * The call holds its slot until its answer is kept: at most --concurrency calls are ever sent and
   * not yet recorded, so a SIGKILL makes a later run pay again for at most that many.
   */
  private async pay(key: string, email: string, token: string, call: PaidCall): Promise<VerificationOutcome> {
    const { signal } = this.settings;
    return this.slots.run(async () => {
      // Stopped while this call waited for its turn, a store failed or the endpoint refused meanwhile: not sent.
      const send = async () => {
        signal?.throwIfAborted();
        this.throwIfStoreFailed();
        if (this.unreadable) throw this.unreadable;
        if (this.refused) throw this.refused;
        await this.recordSending(key);
        return this.readable(this.client.verify(email, { idempotencyKey: token, paid: this.watch(key, call) }));
      };
      let result: VerifyAnswer | undefined;
      if (!this.answerRead) await this.firstCall.run(async () => (result = this.answerRead ? undefined : await send()));
      result ??= await send();
      call.answered = true;
      this.run.unitsSpent += 1;
      if (result.idempotency !== undefined) this.run.idempotencyClaimed = true;
      // Each lost try may have cost a unit: a replay header cannot be told from a lie (contract row 23).
      this.run.mayAlsoHaveCost += call.lost;
      this.reserved -= call.reserved - 1 - call.lost;
      countWords(this.run, result);
      return this.keep(key, email, result);
    });
  }

  /** The answer, marking the first one read; an unreadable one stops the paying (see `unreadable`). */
  private async readable(answer: Promise<VerifyAnswer>): Promise<VerifyAnswer> {
    try {
      const result = await answer;
      this.answerRead = true;
      return result;
    } catch (error) {
      if (error instanceof MalformedResponseError) this.unreadable ??= error;
      throw error;
    }
  }

  /**
   * A kept result's verdict. A word no vocabulary named when it was paid for is kept as that word, and
   * read again with this run's verify-statuses: set since, it gives the verdict without paying again;
   * still unknown, the run says so again (refusal.ts) instead of reading it as a plain `unknown`.
   */
  private verdictOf(kept: string): string {
    if ((VERDICTS as readonly string[]).includes(kept)) return kept;
    const read = readVerifyStatus(kept, this.settings.verifyStatuses ?? {});
    countWords(this.run, { status: read.status, status_raw: read.raw, status_known: read.known });
    return read.status;
  }

  /** A paid answer, kept in the run's state and the ledger before it is used. */
  private async keep(key: string, email: string, result: VerifyAnswer): Promise<VerificationOutcome> {
    const verifiedAt = result.checked_at ?? new Date().toISOString();
    // An unknown word is kept as the service's word (bounded), so a later run can read it with a setting.
    const word = result.status_known === false ? result.status_raw.slice(0, WORD_LENGTH) : '';
    const paid = { email, status: word === '' ? result.status : word, verified_at: verifiedAt };
    try {
      await this.stored(() => this.stores.resume?.put(key, { ...paid, run: this.settings.runId }));
      await this.stored(() => this.stores.ledger.put(key, paid));
    } catch (error) {
      // Paid for but not kept: spooled, so the next run stores it before paying (the store's error stands).
      try {
        if (this.stores.spool) {
          this.stores.spool.append(key, { ...paid, run: this.settings.runId });
          this.run.spooled += 1;
        }
      } catch {
        // The spool's own disk failed as well: the store's error is the one to tell.
      }
      throw error;
    }
    return { verification: result.status, verified_at: verifiedAt, from: 'service' };
  }

  /**
   * The write-ahead record of one attempt, on disk before it is sent: the run's state if any, else the
   * ledger (the team store's is a commit). The call, or the retry, waits for it, and a failure is the
   * store's: no paid call starts after it.
   */
  private recordSending(key: string): Promise<void> {
    return this.stored(() => (this.stores.resume ?? this.stores.ledger).recordSending?.(key, this.settings.runId));
  }

  /**
   * The budget's say in one paid call: a lost answer may have cost a unit, so a retry after one
   * needs a unit of room, whatever the service says of Idempotency-Key (a service that ignores the
   * key charges the retry again). The retry is in the write-ahead record before it is sent. A
   * stopped run sends no retry.
   */
  private watch(key: string, call: PaidCall): PaidCallWatch {
    return {
      answerLost: () => {
        call.lost += 1;
        this.run.answersLost += 1;
      },
      beforeSend: async () => {
        // Two turns of the event loop first: what the store's connection has already received (the
        // server's end of the session, its refusal of a write) is read before the call may go out.
        await new Promise((resolve) => setImmediate(resolve));
        await new Promise((resolve) => setImmediate(resolve));
        this.throwIfStoreFailed();
      },
      mayRetry: async () => {
        if (this.settings.signal?.aborted || this.storeFailed()) return false;
        if (this.reserved + 1 > this.run.budget) {
          call.refused = true;
          return false;
        }
        this.reserved += 1;
        call.reserved += 1;
        // On disk (or committed, for the team store) before the retry goes out; none if it cannot be.
        try {
          await this.recordSending(key);
        } catch {
          return false;
        }
        return true;
      },
    };
  }
}

/** At most this many distinct words are counted by name, each up to WORD_LENGTH characters: a record stays small. */
const DISTINCT_WORDS = 20;
const WORD_LENGTH = 64;
const OTHER_WORDS = '(other words)';

/** The service's word of one paid answer, where it is not the contract's: unknown to prospect, or read as a verdict. */
function countWords(run: VerificationRun, result: Pick<VerifyAnswer, 'status' | 'status_raw' | 'status_known'>): void {
  // An answer without its own word (a client of tests, a library caller's stub) is the verdict's.
  const raw = typeof result.status_raw === 'string' ? result.status_raw : result.status;
  if (raw === result.status) return;
  const named = (words: ReadonlyMap<string, unknown>) => {
    const word = raw.slice(0, WORD_LENGTH);
    return words.has(word) || words.size < DISTINCT_WORDS ? word : OTHER_WORDS;
  };
  if (result.status_known === false) {
    const word = named(run.unknownStatuses);
    run.unknownStatuses.set(word, (run.unknownStatuses.get(word) ?? 0) + 1);
  }
  const word = named(run.serviceWords);
  const seen = run.serviceWords.get(word);
  if (seen) seen.count += 1;
  else run.serviceWords.set(word, { read_as: result.status, count: 1 });
}

/** One address's paid call: units held for it against the budget, answers lost, whether the budget refused a retry. */
interface PaidCall {
  reserved: number;
  lost: number;
  refused: boolean;
  answered?: boolean;
}

/** A paid call's Idempotency-Key: the run's scope and a hash of the address (within the service's 200 characters). */
function idempotencyKeyFor(scope: string, key: string): string {
  return `prospect-${scope}-${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
}
