import { createHash } from 'node:crypto';
import { rmdirSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDirectoryDurable } from '../../io/atomic-file.js';
import { SyncedLines } from '../../io/synced-lines.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { createPidFile, readPidFile, removeAbandoned, thisProcess, type FileSeen } from '../../io/pid-file.js';
import { parseStoredJson } from '../shared/stored-json.js';
import type { VerificationResult, VerificationClaim, VerificationLedger } from '../state-store/types.js';

/** A line of a verification ledger: one paid result. */
const ledgerLineSchema = z.object({
  key: z.string(),
  email: z.string(),
  status: z.string(),
  verified_at: z.string(),
  /** The pipeline run that paid for it, so a resumed run counts it against the same budget. */
  run: z.string().optional(),
});
export type { VerificationResult };

/**
 * Who is paying for an address right now (a claim file of the ledger's `.claims` folder), and the
 * paid call's Idempotency-Key. A claim left `released` keeps the key of a call whose answer was lost:
 * whoever pays for the address next sends the same key, so a service that honours it charges once.
 */
const claimSchema = z.object({
  pid: z.number().int(),
  host: z.string(),
  token: z.string(),
  released: z.boolean().optional(),
});

/** A line of the write-ahead record: a paid call for this address is about to be sent, by this pipeline run if any. */
const sentLineSchema = z.object({ key: z.string(), run: z.string().optional() });

/** How often a run waiting on another run's paid call looks again. */
const CLAIM_POLL_MS = 25;

/**
 * The ledger's file name for one service and one key: a hash of the service's identity (its origin,
 * or the sandbox's dataset) and of a hash of the key. Results paid with one account are never
 * reused for another, and the key itself is never written anywhere.
 */
export function ledgerFileName(serviceIdentity: string, apiKey: string): string {
  const keyHash = sha256(apiKey);
  return `verify-${sha256(`${serviceIdentity}\n${keyHash}`).slice(0, 16)}.ndjson`;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Paid verification results, one JSON line each, appended the moment a result arrives: a crash
 * right after a paid call must not lose what was paid for. One ledger per service and key, shared
 * by every command and every run (mode 0600 in a 0700 folder: addresses are personal data). Runs
 * at the same time see each other's results: `refresh` reads what others appended since, and
 * `claim` makes sure only one of them pays for an address.
 */
export class LocalVerificationLedger implements VerificationLedger {
  private readonly entries = new Map<string, VerificationResult>();
  private readonly results: SyncedLines;
  /** The write-ahead record: one line per paid call sent (see recordSending). */
  private readonly sentLog: SyncedLines;
  /** Paid calls sent, from the write-ahead record: run ('' for none) → address key → calls. */
  private readonly sent = new Map<string, Map<string, number>>();

  private constructor(
    private readonly path: string,
    private readonly freshSince: Date,
    private readonly ownRun?: string,
  ) {
    this.results = new SyncedLines(path);
    this.sentLog = new SyncedLines(sentLogPath(path));
  }

  /**
   * `ownRun`: a pipeline run's id; its own results are kept whatever their age (a resumed run has
   * paid for them: they count against its budget and are never paid again).
   */
  static open(directory: string, fileName: string, freshSince: Date, ownRun?: string): LocalVerificationLedger {
    // Addresses are personal data: the ledger's directory is the user's alone.
    makeDirectoryDurable(directory, 0o700);
    const ledger = new LocalVerificationLedger(join(directory, fileName), freshSince, ownRun);
    ledger.refresh();
    ledger.readSentLog();
    return ledger;
  }

  /** A ledger that remembers nothing (--no-cache) but still de-duplicates within the run. */
  static disabled(): LocalVerificationLedger {
    return new LocalVerificationLedger('', new Date(8.64e15));
  }

  get shared(): boolean {
    return this.path !== '';
  }

  get(key: string): VerificationResult | undefined {
    return this.entries.get(key);
  }

  /** A result known from elsewhere (the input's own columns): reused by this run, never written. */
  remember(key: string, result: VerificationResult): void {
    this.entries.set(key, result);
  }

  put(key: string, result: VerificationResult): void {
    this.entries.set(key, result);
    if (!this.shared) return;
    // On disk before the result is used: a power cut must not lose a unit that was paid for, nor
    // let a checkpoint name a result the ledger no longer has (docs/reliability.md, "A power cut").
    this.results.append(JSON.stringify({ key, ...result }));
  }

  /**
   * The write-ahead record of a paid call, on disk before the request is sent: a run killed before
   * its answer is recorded still says it may have been charged, and its resume counts it (sentBy).
   */
  recordSending(key: string, run: string | undefined): void {
    this.countSent(key, run);
    if (this.shared) this.sentLog.append(JSON.stringify({ key, ...(run !== undefined && { run }) }));
  }

  /** The paid calls the run sent, per address, as the write-ahead record has them (this process's too). */
  sentBy(runId: string): ReadonlyMap<string, number> {
    return this.sent.get(runId) ?? new Map();
  }

  /** How many results the given run paid for (a resumed run has already spent these units). */
  countPaidBy(runId: string): number {
    let count = 0;
    for (const entry of this.entries.values()) if (entry.run === runId) count += 1;
    return count;
  }

  /**
   * Makes this run the only one paying for `key` until the release: a claim file, created
   * exclusively, names the process and the Idempotency-Key. Another run waits for it to go (then
   * finds the result with `refresh`); a claim left by a process that died, or released after a lost
   * answer, is taken over with its key. Resolves to the claim.
   */
  async claim(key: string, token: string, signal?: AbortSignal): Promise<VerificationClaim> {
    if (!this.shared) return { token, release: async () => {} };
    const directory = `${this.path}.claims`;
    const path = join(directory, sha256(key).slice(0, 32));
    let inherited: string | undefined;
    for (;;) {
      signal?.throwIfAborted();
      const held = { ...thisProcess(), token: inherited ?? token };
      try {
        await mkdir(directory, { recursive: true, mode: 0o700 });
        if (await createPidFile(path, held)) {
          return { token: held.token, release: (answerLost) => releaseClaim(path, held, answerLost === true) };
        }
      } catch (error) {
        // ENOENT: another run removed the empty claims folder between our mkdir and open; make it again.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      const abandoned = await abandonedClaim(path);
      if (abandoned) {
        inherited = abandoned.token ?? inherited;
        await removeAbandoned(path, abandoned);
      } else await sleep(CLAIM_POLL_MS, undefined, { signal });
    }
  }

  /** Reads the lines other runs appended since the last read (and, the first time, the whole file). */
  refresh(): void {
    if (!this.shared) return;
    const { lines, firstLine } = this.results.readNew();
    for (const [index, line] of lines.entries()) {
      if (line.trim() === '') continue;
      const { key, ...entry } = parseStoredJson(line, ledgerLineSchema, {
        name: `the verification ledger ${this.path}${firstLine ? `:${firstLine + index}` : ''}`,
        startOver: `Remove ${this.path} to start over: its results are then asked for, and paid, again.`,
      });
      // An expired result is simply not reused, unless this very run paid for it.
      if (new Date(entry.verified_at) >= this.freshSince || (this.ownRun !== undefined && entry.run === this.ownRun))
        this.entries.set(key, entry);
    }
  }

  close(): void {
    this.results.close();
    this.sentLog.close();
    // The claims folder goes when no run has a claim in it, so the cache directory holds only ledgers.
    if (this.shared) rmdirQuietly(`${this.path}.claims`);
  }

  private readSentLog(): void {
    const { lines, firstLine } = this.sentLog.readNew();
    for (const [index, line] of lines.entries()) {
      if (line.trim() === '') continue;
      const { key, run } = parseStoredJson(line, sentLineSchema, {
        name: `the record of paid calls ${this.sentLog.path}${firstLine ? `:${firstLine + index}` : ''}`,
        startOver: `Remove ${this.sentLog.path} to start over: a resumed run then counts only the answers it kept.`,
      });
      this.countSent(key, run);
    }
  }

  private countSent(key: string, run: string | undefined): void {
    const byKey = this.sent.get(run ?? '') ?? new Map<string, number>();
    byKey.set(key, (byKey.get(key) ?? 0) + 1);
    this.sent.set(run ?? '', byKey);
  }
}

/** The write-ahead record beside a ledger: verify-<hash>.ndjson → verify-<hash>.sent.ndjson. */
function sentLogPath(ledgerPath: string): string {
  return ledgerPath === '' ? '' : ledgerPath.replace(/(\.ndjson)?$/, '.sent.ndjson');
}

function rmdirQuietly(directory: string): void {
  try {
    rmdirSync(directory);
  } catch {
    // Not empty (another run is paying) or not there: either way nothing to do.
  }
}

/** A claim ends: removed, or kept released with its key when the call may have been charged without an answer. */
async function releaseClaim(path: string, held: { pid: number; host: string; token: string }, answerLost: boolean) {
  if (!answerLost) return rm(path, { force: true });
  await writeFile(path, JSON.stringify({ ...held, released: true }), { mode: 0o600 });
}

/**
 * A claim nobody holds any more: abandoned by its process (io/pid-file.ts decides), or released
 * after a lost answer; undefined while it is held. Gives its key, if any, and the file read.
 */
async function abandonedClaim(path: string): Promise<{ token?: string | undefined; seen: FileSeen } | undefined> {
  const found = await readPidFile(path, (value) => claimSchema.safeParse(value).data);
  if (found.kind === 'absent') return undefined; // released meanwhile: looked at again at once
  if (found.kind === 'abandoned' || found.holder?.released === true)
    return { token: found.holder?.token, seen: found.seen };
  return undefined;
}
