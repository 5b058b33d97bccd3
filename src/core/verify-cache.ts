import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface CachedVerification {
  email: string;
  status: string;
  verified_at: string;
  /** The pipeline run that paid for it, so a resumed run counts it against the same budget. */
  run?: string;
}

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

  private constructor(
    private readonly path: string,
    private readonly freshSince: Date,
  ) {}

  static open(directory: string, serviceOrigin: string, freshSince: Date): VerifyCache {
    const origin = createHash('sha256').update(serviceOrigin).digest('hex').slice(0, 16);
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    // Addresses are personal data: the cache directory is the user's alone.
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
    this.fd ??= openSync(this.path, 'a', 0o600);
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

  private load(): void {
    if (!existsSync(this.path)) return;
    for (const line of readFileSync(this.path, 'utf8').split('\n')) {
      const entry = parseLine(line);
      // A torn last line (a crash mid-append) or an expired result is simply not reused.
      if (entry && new Date(entry.verified_at) >= this.freshSince) this.entries.set(entry.key, entry);
    }
  }
}

function parseLine(line: string): (CachedVerification & { key: string }) | undefined {
  if (line.trim() === '') return undefined;
  try {
    const value = JSON.parse(line) as Partial<CachedVerification & { key: string }>;
    if (typeof value.key === 'string' && typeof value.status === 'string' && typeof value.verified_at === 'string' && typeof value.email === 'string') {
      return value as CachedVerification & { key: string };
    }
  } catch {
    // fall through
  }
  return undefined;
}
