/**
 * The state-store interface: where prospect keeps what must outlive a run. Two stores implement it:
 * the local one (files and SQLite in the cache and --state directories, today's behaviour) and the
 * team's PostgreSQL database (./pg/), loaded only when a state URL is set.
 */
import type { TeamJobs } from './jobs.js';
import type { LeadFields, RunRecord, StoredRunRecord } from './run-record.js';

/** One paid verification result, as a ledger keeps it. */
export interface VerificationResult {
  /** The address; '' from a store that keeps only its hash. */
  email: string;
  status: string;
  verified_at: string;
  /** The pipeline run that paid for it, so a resumed run counts it against the same budget. */
  run?: string | undefined;
}

/** The right to pay for one address until released, and the Idempotency-Key to pay with. */
export interface VerificationClaim {
  /** The key proposed, or the one of an earlier claim on the address that was abandoned or left with a lost answer. */
  readonly token: string;
  /**
   * Ends the claim. `answerLost`: the call may have been charged without an answer; the key is kept
   * for the next claimant instead of being forgotten.
   */
  release(answerLost?: boolean): Promise<void>;
}

/**
 * The verification ledger: paid results looked up by address key, and claims so that runs at the
 * same time (on one machine or, for the team store, anywhere) never both pay for an address.
 */
export interface VerificationLedger {
  /** Whether results are kept beyond this run (false with --no-cache). */
  readonly shared: boolean;
  get(key: string): VerificationResult | undefined;
  /** A result known from elsewhere (the input's own columns): reused by this run, never written. */
  remember(key: string, result: VerificationResult): void;
  /** A paid result, kept before it is used (and, for the team store, the address's claim ended with it). */
  put(key: string, result: VerificationResult): void | Promise<void>;
  /** How many results the given run paid for. */
  countPaidBy(runId: string): number;
  /**
   * The write-ahead record: a paid call for `key` (by the pipeline run `run`, if any) is about to be
   * sent, on disk (or committed, for the team store) before it is. Optional: a store without it
   * cannot tell a resume what a killed run may have spent beyond the answers it kept.
   */
  recordSending?(key: string, run: string | undefined): void | Promise<void>;
  /**
   * The paid calls the run sent, per address, from the write-ahead record. The team store keys them
   * by hash, which get() never finds, so its counts are already those beyond the run's kept answer.
   */
  sentBy?(runId: string): ReadonlyMap<string, number>;
  /**
   * The store's failure noticed outside any call (the server ended the team session), undefined while
   * it works: asked before each paid call, so none starts after the store is gone.
   */
  failed?(): Error | undefined;
  /** Waits until this run alone may pay for `key`; `token` is the key proposed for the paid call. */
  claim(key: string, token: string, signal?: AbortSignal): Promise<VerificationClaim>;
  /** Reads what other runs recorded since (the team store: for `key`). */
  refresh(key?: string): void | Promise<void>;
  close(): void | Promise<void>;
}

/** The leads a store's runs exported, for --only-new. */
export interface ExportsLedger {
  /** The rows whose lead no earlier run (of this store) exported, in their order. */
  newOnly<Row extends LeadFields>(rows: Row[]): Row[] | Promise<Row[]>;
  /**
   * Who had exported the leads newOnly left out in this process, most first: a job (undefined for this
   * --state directory's own earlier runs), its run and when that run finished, and how many of them.
   */
  exportedBefore?(): Promise<ExportedBefore[]> | ExportedBefore[];
  /** The latest recorded run whose output was `path` (absolute). */
  runThatWrote(path: string): StoredRunRecord | undefined | Promise<StoredRunRecord | undefined>;
  /** A successful run's keys and record, once; undefined when already recorded. */
  recordRun(record: RunRecord, batches: AsyncIterable<Buffer[]>): Promise<number | undefined>;
  close(): void | Promise<void>;
}

/** Leads --only-new left out, by the job and run that exported (or, unfinished, holds) them. */
export interface ExportedBefore {
  job: string | undefined;
  run: string | undefined;
  finishedAt: string | undefined;
  leads: number;
}

/** A pipeline run's checkpoint, as far as a store beyond the machine needs to know it. */
export interface CommittedRun {
  run_id: string;
  output_bytes: number;
  keys_bytes: number;
  spooled: boolean;
}

/** The local paths of a job's unfinished run (StateDirectory's), which a remote store mirrors. */
export interface LocalRunFiles {
  readonly checkpointPath: string;
  readonly outputPath: string;
  readonly rowsPath: string;
  readonly keysPath: string;
  readonly publishingPath: string;
}

/**
 * A pipeline job kept beyond this machine (`--state pg:NAME`): its unfinished run is mirrored in a
 * private local directory while the run works, and every commit goes to the store first.
 */
export interface RemoteJobState {
  /** How the job is named in messages: pg:NAME. */
  readonly label: string;
  readonly leads: ExportsLedger;
  /** Takes the job's lock (or says who holds it), then writes its unfinished run into `files`. */
  lock(command: string, files: LocalRunFiles): Promise<() => Promise<void>>;
  /** The run this process works on (new or resumed): what --only-new reserves leads for. */
  beginRun(runId: string): void;
  /** One transaction: the page's bytes and lead keys, and the checkpoint that covers them. */
  commitPage(files: LocalRunFiles, checkpoint: CommittedRun, checkpointJson: string): Promise<void>;
  markPublishing(record: RunRecord): Promise<void>;
  /** Forgets the unfinished run (after its success is recorded, or when it is dropped). */
  discard(): Promise<void>;
}

/** The team's store: its ledgers and its jobs, over one connection. */
export interface TeamStore {
  /** The URL as shown (no password). */
  readonly shown: string;
  openVerificationLedger(
    ledger: string,
    options: { freshSince: Date; ownRun?: string | undefined },
  ): Promise<VerificationLedger & { close(): void }>;
  job(name: string): RemoteJobState;
  /** Its jobs, for `prospect state`. */
  jobs: TeamJobs;
  close(): Promise<void>;
}
