import type { ProspectClient } from '../../api/index.js';
import { UsageError } from '../../exit-codes.js';
import { parseMaxAge } from '../../io/max-age.js';
import type { Connection } from '../../runtime/connection.js';
import type { RunContext } from '../../runtime/context.js';
import { newVerificationRun, Verifier } from './verifier.js';
import { cacheDirectory, VerifyCache } from './cache.js';

export interface VerifierOptions {
  /** --cache / --no-cache. */
  useCache: boolean;
  /** Cached results checked before this moment are too old to reuse (from --cache-ttl, see cacheCutoff). */
  cacheFreshSince: Date;
  budget?: number | undefined;
  concurrency: number;
  /** Pipeline --state: results live in the state directory, tagged with the run. */
  stateDir?: string | undefined;
  runId?: string | undefined;
  /** Restored from a checkpoint (counts that the cache cannot tell). */
  countedBefore?: { from_cache: number; unchecked: number } | undefined;
  /** A cache the caller already opened (verify counts what it holds before paying), read once. */
  cache?: VerifyCache;
}

export type OpenedVerifier = Verifier & { snapshot(): { units_spent: number; from_cache: number; unchecked: number }; close(): void };

/** The cache-backed verifier shared by `verify`, `contacts --stale verify` and `pipeline`. */
export function openVerifier(ctx: RunContext, client: Pick<ProspectClient, 'verify'>, connection: Connection, options: VerifierOptions): OpenedVerifier {
  const cache = options.cache ?? openVerifyCache(ctx, connection, options);
  const run = newVerificationRun(options.budget);
  // A resumed run has already paid for what its cache entries say; they count against the budget.
  if (options.runId !== undefined) run.unitsSpent = cache.countPaidBy(options.runId);
  if (options.countedBefore) {
    run.fromCache = options.countedBefore.from_cache;
    run.unchecked = options.countedBefore.unchecked;
  }
  const verifier = new Verifier(client, cache, run, options.concurrency, options.runId, options.useCache);
  return Object.assign(verifier, {
    snapshot: () => ({ units_spent: verifier.run.unitsSpent, from_cache: verifier.run.fromCache, unchecked: verifier.run.unchecked }),
    close: () => cache.close(),
  });
}

/** Where paid results for this service live: the state directory, the user's cache, or nowhere (--no-cache). */
export function openVerifyCache(ctx: RunContext, connection: Connection, options: Pick<VerifierOptions, 'useCache' | 'cacheFreshSince' | 'stateDir'>): VerifyCache {
  // With --state, paid results are kept in the state even with --no-cache: a resume must not pay twice.
  const directory = options.stateDir ?? (options.useCache ? cacheDirectory(ctx.env) : undefined);
  return directory ? VerifyCache.open(directory, new URL(connection.baseUrl).origin, options.cacheFreshSince) : VerifyCache.disabled();
}

export function cacheCutoff(ttl: string, now: Date): Date {
  const parsed = parseMaxAge(ttl, now);
  if (!parsed.ok) throw new UsageError(`--cache-ttl "${ttl}": ${parsed.reason}.`);
  return parsed.cutoff;
}
