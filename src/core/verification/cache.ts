import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync, truncateSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { parseStoredJson } from '../stored-json.js';

/** A line of a verification cache: one paid result. */
const cachedLineSchema = z.object({
  key: z.string(),
  email: z.string(),
  status: z.string(),
  verified_at: z.string(),
  /** The pipeline run that paid for it, so a resumed run counts it against the same budget. */
  run: z.string().optional(),
});
export type CachedVerification = Omit<z.output<typeof cachedLineSchema>, 'key'>;

/** The user's cache directory: PROSPECT_CACHE_DIR, else $XDG_CACHE_HOME/prospect, else ~/.cache/prospect. */
export function cacheDirectory(env: NodeJS.ProcessEnv): string {
  if (env.PROSPECT_CACHE_DIR) return env.PROSPECT_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'prospect');
}

/**
 * Paid verification results, one JSON line each, appended the moment a result arrives: a crash
 * right after a paid call must not lose what was paid for. One file per service origin, so the
 * sandbox's answers never stand in for the real service's. Mode 0600: addresses are personal data.
 */
export class VerifyCache {
  private readonly entries = new Map<string, CachedVerification>();
  private fd: number | undefined;
  /** A torn last line (a crash mid-append): where it starts, and the file's size when it was read. */
  private torn: { from: number; size: number } | undefined;

  private constructor(
    private readonly path: string,
    private readonly freshSince: Date,
  ) {}

  static open(directory: string, serviceOrigin: string, freshSince: Date): VerifyCache {
    const origin = createHash('sha256').update(serviceOrigin).digest('hex').slice(0, 16);
    // Addresses are personal data: the cache directory is the user's alone.
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    const cache = new VerifyCache(join(directory, `verify-${origin}.ndjson`), freshSince);
    cache.load();
    return cache;
  }

  /** A cache that remembers nothing (--no-cache) but still de-duplicates within the run. */
  static disabled(): VerifyCache {
    return new VerifyCache('', new Date(8.64e15));
  }

  get(key: string): CachedVerification | undefined {
    return this.entries.get(key);
  }

  put(key: string, result: CachedVerification): void {
    this.entries.set(key, result);
    if (this.path === '') return;
    if (this.fd === undefined) {
      this.cutTornLine();
      this.fd = openSync(this.path, 'a', 0o600);
    }
    writeSync(this.fd, `${JSON.stringify({ key, ...result })}\n`);
  }

  /** How many results the given run paid for (a resumed run has already spent these units). */
  countPaidBy(runId: string): number {
    let count = 0;
    for (const entry of this.entries.values()) if (entry.run === runId) count += 1;
    return count;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /**
   * Cuts the torn line off before the first append, so the new line does not run into it; unless
   * another run has appended since it was read (it cut the line itself: a second cut would lose its results).
   */
  private cutTornLine(): void {
    if (this.torn === undefined) return;
    if (statSync(this.path, { throwIfNoEntry: false })?.size === this.torn.size) truncateSync(this.path, this.torn.from);
    this.torn = undefined;
  }

  private load(): void {
    if (!existsSync(this.path)) return;
    const bytes = readFileSync(this.path);
    // A crash mid-append leaves a torn last line, never a finished one: as far as the cache knows it
    // was not paid for, so it is not read, and it is cut off before this run appends behind it.
    const complete = bytes.lastIndexOf(0x0a) + 1;
    if (complete < bytes.length) this.torn = { from: complete, size: bytes.length };
    const lines = bytes.subarray(0, complete).toString('utf8').split('\n');
    for (const [index, line] of lines.entries()) {
      if (line.trim() === '') continue;
      const { key, ...entry } = parseStoredJson(line, cachedLineSchema, {
        name: `the verification cache ${this.path}:${index + 1}`,
        startOver: `Remove ${this.path} to start over: its results are then asked for, and paid, again.`,
      });
      // An expired result is simply not reused.
      if (new Date(entry.verified_at) >= this.freshSince) this.entries.set(key, entry);
    }
  }
}
