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

/** An exported lead's address, as a run's key file has it (lead-key.ts leadKeyLine). */
export interface ExportedAddress {
  /** addressDigest's 12 bytes. */
  digest: Buffer;
  /** Its last-confirmed day when the run exported it; null when unknown. */
  lastSeen: string | null;
}

/** One export of an address (`prospect provenance`): the run that wrote it, as its record has it. */
export interface AddressExport {
  job: string;
  lastSeen: string | null;
  record: StoredRunRecord;
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
  recordRun(
    record: RunRecord,
    batches: AsyncIterable<Buffer[]>,
    addresses?: AsyncIterable<ExportedAddress[]>,
  ): Promise<number | undefined>;
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

/**
 * Standing suppressions (`prospect forget`): addresses kept out of every output, paid check and run,
 * held only as keyed hashes of their emailKey.
 */
export interface SuppressionStore {
  /** The stored form of an address (its emailKey), as hex. */
  hash(emailKey: string): string;
  /** Resolves to how many were new. */
  add(emailKeys: readonly string[]): Promise<number>;
  hashes(): Promise<Set<string>>;
}

/** The team's store: its ledgers and its jobs, over one connection. */
export interface TeamStore {
  readonly suppressions: SuppressionStore;
  /** The URL as shown (no password). */
  readonly shown: string;
  openVerificationLedger(
    ledger: string,
    options: { freshSince: Date; ownRun?: string | undefined },
  ): Promise<VerificationLedger & { close(): void }>;
  job(name: string): RemoteJobState;
  /** The snapshots of the listings walked with --state pg:NAME. */
  snapshots(name: string): SnapshotStore;
  /** Every recorded export of the address (its addressDigest), by any job of the store. */
  exportsOf(digest: Buffer): Promise<AddressExport[]>;
  /** Its jobs, for `prospect state`. */
  jobs: TeamJobs;
  close(): Promise<void>;
}

/** One company of a listing as a snapshot keeps it: its technologies' names (sorted) and its row's JSON. */
interface SnapshotCompany {
  domain: string;
  technologies: string[];
  row: string;
}

/** A company of a pending snapshot: what the series will have observed of it once the snapshot is published. */
export interface PendingCompany extends SnapshotCompany {
  firstSeen: string;
  technologyFirstSeen: Record<string, string>;
  /** stackDigest of the row's technology names, computed once by the diff (a store computes it if absent). */
  stack?: string;
  /** New, or its stack differs from the last complete snapshot's: only then can it add first dates (absent: true). */
  fresh?: boolean;
  /** rowDigest of `row`, and whether the last complete snapshot has that very row (a store may share it). */
  rowDigest?: string;
  sameRow?: boolean;
}

/** What a state's complete snapshots of one series have observed of a company. */
export interface ObservedCompany {
  domain: string;
  /** The first complete snapshot that listed the company. */
  firstSeen: string;
  /** Each technology ever observed on it: the first complete snapshot that listed it there. */
  technologyFirstSeen: Record<string, string>;
  /**
   * The company in the last complete snapshot; undefined when only an earlier one listed it. `stack`:
   * its stackDigest where the store keeps one (an equal digest is the same stack; `technologies` is then not read),
   * and `rowDigest` its row's.
   */
  previous: (Omit<SnapshotCompany, 'domain'> & { stack?: string; rowDigest?: string }) | undefined;
}

/** A complete snapshot, as a diff names it. */
export interface SnapshotInfo {
  id: string;
  takenAt: string;
  source: string | undefined;
}

/**
 * One series of snapshots (one set of filters) as a walk sees it: the last complete snapshot to
 * compare with, and this walk's own snapshot, pending until publish().
 */
export interface SnapshotSeries {
  readonly previous: SnapshotInfo | undefined;
  /** The pending snapshot is a resumed run's, with the pages it walked before. */
  readonly resumed: boolean;
  /** When the pending snapshot was taken (a resumed run's: when that run started). */
  readonly takenAt: string;
  /** Whether add() keeps each company's first dates (the team store seals them); the local one derives them. */
  readonly keepsObservations: boolean;
  /** What the complete snapshots observed of these domains (those they ever listed), looked up on disk. */
  lookup(domains: string[]): Promise<Map<string, ObservedCompany>>;
  /**
   * Adds a page's companies to the pending snapshot, committed when it returns (and, for a resumable
   * walk, durable: a checkpoint that points past the page finds them on resume).
   */
  add(companies: PendingCompany[]): Promise<void>;
  /** The companies of `previous` the pending snapshot does not list: pages in domain order, from disk. */
  gone(): AsyncGenerator<ObservedCompany[]>;
  /**
   * Makes the pending snapshot the series' last complete one, unless another run published since
   * `previous` was read: resolves to false then, and the pending snapshot is dropped.
   */
  publish(source: string | undefined): Promise<boolean>;
  /** Drops the pending snapshot (a failed, cut or killed walk): `previous` stays the last complete one. */
  abandon(): Promise<void>;
}

/** Where a state keeps its listings' snapshots: SQLite in --state DIR, or the team's PostgreSQL. */
export interface SnapshotStore {
  /**
   * Opens the series `key` (a hash of the filters) for a walk whose snapshot is taken at `takenAt`;
   * `resumeId`: a resumed run's, whose pending snapshot is taken over if it is still there.
   */
  openSeries(key: string, takenAt: string, resumeId?: string): Promise<SnapshotSeries>;
  close(): void | Promise<void>;
}
