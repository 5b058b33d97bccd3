import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fstatSync,
  openSync,
  readSync,
  rmdirSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { makeDirectoryDurable, syncDirectory } from '../../io/atomic-file.js';
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
  private fd: number | undefined;
  /** A torn last line (a crash mid-append): where it starts, and the file's size when it was read. */
  private torn: { from: number; size: number } | undefined;
  /** How far the file has been read: the end of its last complete line. */
  private readUpTo = 0;

  private constructor(
    private readonly path: string,
    private readonly freshSince: Date,
    private readonly ownRun?: string,
  ) {}

  /**
   * `ownRun`: a pipeline run's id; its own results are kept whatever their age (a resumed run has
   * paid for them: they count against its budget and are never paid again).
   */
  static open(directory: string, fileName: string, freshSince: Date, ownRun?: string): LocalVerificationLedger {
    // Addresses are personal data: the ledger's directory is the user's alone.
    makeDirectoryDurable(directory, 0o700);
    const ledger = new LocalVerificationLedger(join(directory, fileName), freshSince, ownRun);
    ledger.refresh();
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
    if (this.fd === undefined) {
      this.cutTornLine();
      const created = !existsSync(this.path);
      this.fd = openSync(this.path, 'a', 0o600);
      if (created) syncDirectory(dirname(this.path));
    }
    // One write of one whole line, in append mode: lines of runs at the same time never interleave.
    writeSync(this.fd, `${JSON.stringify({ key, ...result })}\n`);
    // On disk before the result is used: a power cut must not lose a unit that was paid for, nor
    // let a checkpoint name a result the ledger no longer has (docs/reliability.md, "A power cut").
    fdatasyncSync(this.fd);
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
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    try {
      const size = fstatSync(fd).size;
      if (size <= this.readUpTo) return;
      const bytes = Buffer.alloc(size - this.readUpTo);
      const read = readSync(fd, bytes, 0, bytes.length, this.readUpTo);
      this.take(bytes.subarray(0, read), this.readUpTo);
    } finally {
      closeSync(fd);
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    // The claims folder goes when no run has a claim in it, so the cache directory holds only ledgers.
    if (this.shared) rmdirQuietly(`${this.path}.claims`);
  }

  /**
   * Cuts the torn line off before the first append, so the new line does not run into it; unless
   * another run has appended since it was read (it cut the line itself: a second cut would lose its results).
   */
  private cutTornLine(): void {
    if (this.torn === undefined) return;
    if (statSync(this.path, { throwIfNoEntry: false })?.size === this.torn.size)
      truncateSync(this.path, this.torn.from);
    this.torn = undefined;
  }

  /** The complete lines of `bytes` (read at `offset`) into the entries. */
  private take(bytes: Buffer, offset: number): void {
    // A crash mid-append leaves a torn last line, never a finished one: as far as the ledger knows it
    // was not paid for, so it is not read, and it is cut off before this run appends behind it.
    const complete = bytes.lastIndexOf(0x0a) + 1;
    this.torn = complete < bytes.length ? { from: offset + complete, size: offset + bytes.length } : undefined;
    const firstLine = offset === 0 ? 1 : undefined;
    const lines = bytes.subarray(0, complete).toString('utf8').split('\n');
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
    this.readUpTo = offset + complete;
  }
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
