import { randomUUID } from 'node:crypto';
import type { ProspectClient } from '../../api/index.js';
import { UsageError } from '../../exit-codes.js';
import { makeDirectoryDurable } from '../../io/atomic-file.js';
import { parseMaxAge } from '../../io/max-age.js';
import { assertOwnDirectory } from '../../io/own-directory.js';
import { createApiClient } from '../../runtime/api-client.js';
import type { Connection } from '../../runtime/connection.js';
import type { RunContext } from '../../runtime/context.js';
import { newVerificationRun, Verifier, type VerificationRun } from './verifier.js';
import { cacheDirectory, ledgerFileName, LocalVerificationLedger } from './ledger.js';
import { teamStore } from '../state-store/index.js';
import type { VerificationLedger } from '../state-store/types.js';

export interface VerifierOptions {
  /** --cache / --no-cache. */
  useCache: boolean;
  /** Cached results checked before this moment are too old to reuse (from --cache-ttl, see cacheCutoff). */
  cacheFreshSince: Date;
  budget?: number | undefined;
  concurrency: number;
  /** Pipeline --state: the run's own copy of its results lives in the state directory, tagged with the run. */
  stateDir?: string | undefined;
  /** Pipeline --state pg:NAME: the run's own results are the team verification ledger's, tagged with the run. */
  remoteState?: boolean | undefined;
  runId?: string | undefined;
  /** Restored from a checkpoint (counts that the ledger cannot tell). */
  countedBefore?: CheckpointedCounts | undefined;
  /** A ledger the caller already opened (verify counts what it holds before paying), read once. */
  ledger?: VerificationLedger;
}

export type OpenedVerifier = Verifier & { snapshot(): VerificationSnapshot; close(): void };
export interface VerificationSnapshot {
  /** Units charged: answered paid calls. */
  units_spent: number;
  /**
   * The most the service may have charged: units_spent and the units the lost answers may have cost
   * (equal to units_spent when no answer was lost, or the service confirmed the key on each).
   */
  units_spent_at_most: number;
  /** Paid attempts whose answer was lost after the request went out. */
  answers_lost: number;
  /** Whether the service confirmed the Idempotency-Key of a paid call (contract row 27). */
  idempotency: 'confirmed' | 'not confirmed';
  from_cache: number;
  unchecked: number;
}

/** The counts a pipeline checkpoint keeps: what its ledger entries cannot tell a resumed run. */
export interface CheckpointedCounts {
  from_cache: number;
  unchecked: number;
  answers_lost: number;
  may_also_have_cost: number;
  idempotency_confirmed: boolean;
}

export function verificationCounts(run: VerificationRun): CheckpointedCounts {
  return {
    from_cache: run.fromCache,
    unchecked: run.unchecked,
    answers_lost: run.answersLost,
    may_also_have_cost: run.mayAlsoHaveCost,
    idempotency_confirmed: run.idempotencyConfirmed,
  };
}

/** The run's counts as the summary and the closing line give them. */
export function verificationSnapshot(run: VerificationRun): VerificationSnapshot {
  return {
    units_spent: run.unitsSpent,
    units_spent_at_most: run.unitsSpent + run.mayAlsoHaveCost,
    answers_lost: run.answersLost,
    idempotency: run.idempotencyConfirmed ? 'confirmed' : 'not confirmed',
    from_cache: run.fromCache,
    unchecked: run.unchecked,
  };
}

/** The ledger-backed verifier shared by `verify`, `contacts --stale verify` and `pipeline`. */
export async function openVerifier(
  ctx: RunContext,
  client: Pick<ProspectClient, 'verify'>,
  connection: Connection,
  options: VerifierOptions,
): Promise<OpenedVerifier> {
  const ledger = options.ledger ?? (await openVerificationLedger(ctx, connection, options));
  // With --state, paid results are kept in the state even with --no-cache: a resume must not pay twice.
  const resume = await openResumeLedger(ctx, connection, options);
  const run = newVerificationRun(options.budget);
  // A resumed run has already paid for what its own entries say; they count against the budget.
  if (options.runId !== undefined && resume) run.unitsSpent = resume.countPaidBy(options.runId);
  if (options.countedBefore) {
    run.fromCache = options.countedBefore.from_cache;
    run.unchecked = options.countedBefore.unchecked;
    // What the first part's lost answers may have cost still counts against the budget.
    run.answersLost = options.countedBefore.answers_lost;
    run.mayAlsoHaveCost = options.countedBefore.may_also_have_cost;
    run.idempotencyConfirmed = options.countedBefore.idempotency_confirmed;
  }
  const verifier: Verifier = new Verifier(client, { ledger, resume }, run, {
    concurrency: options.concurrency,
    runId: options.runId,
    // A pipeline run's id, so a resume sends the keys of its first part; else a fresh one per run.
    keyScope: options.runId ?? randomUUID(),
    reuseCached: options.useCache,
    signal: ctx.signal,
  });
  return Object.assign(verifier, {
    snapshot: () => verificationSnapshot(verifier.run),
    close: () => {
      void ledger.close();
      void resume?.close();
    },
  });
}

/**
 * The client for paid calls. A SIGINT or SIGTERM does not cut a call it has sent: the service may
 * have charged it, so the run waits for the answer and keeps it (Verifier.settle) before it exits,
 * and no later run pays for it again. No new paid call starts once the run is stopped (the
 * verifier checks the run's signal), and a second signal still exits at once.
 */
export function paidCallsClient(ctx: RunContext, connection: Connection): Pick<ProspectClient, 'verify'> {
  return createApiClient({ ...ctx, signal: new AbortController().signal }, connection);
}

/**
 * The verification ledger for this service and key: the team's when a state URL is set, else the
 * one in the user's cache; one that keeps nothing with --no-cache.
 */
export async function openVerificationLedger(
  ctx: RunContext,
  connection: Connection,
  options: Pick<VerifierOptions, 'useCache' | 'cacheFreshSince'>,
): Promise<VerificationLedger> {
  if (!options.useCache) return LocalVerificationLedger.disabled();
  const team = await teamStore(ctx);
  if (team) return team.openVerificationLedger(ledgerId(connection), { freshSince: options.cacheFreshSince });
  const directory = cacheDirectory(ctx.env);
  // Made if need be, then refused before it is read if another user could swap its ledger and read the paid results.
  makeDirectoryDurable(directory, 0o700);
  assertOwnDirectory(directory, `the verification cache ${directory} (PROSPECT_CACHE_DIR)`);
  return LocalVerificationLedger.open(
    directory,
    ledgerFileName(connection.serviceIdentity, connection.apiKey),
    options.cacheFreshSince,
  );
}

export function cacheCutoff(ttl: string, now: Date): Date {
  const parsed = parseMaxAge(ttl, now);
  if (!parsed.ok) throw new UsageError(`--cache-ttl "${ttl}": ${parsed.reason}.`);
  return parsed.cutoff;
}

/** A pipeline's own paid results, tagged with its run: in its --state directory, or the team verification ledger. */
async function openResumeLedger(
  ctx: RunContext,
  connection: Connection,
  options: VerifierOptions,
): Promise<VerificationLedger | undefined> {
  if (options.stateDir === undefined) return undefined;
  const team = options.remoteState ? await teamStore(ctx) : undefined;
  if (team)
    return team.openVerificationLedger(ledgerId(connection), {
      freshSince: options.cacheFreshSince,
      ownRun: options.runId,
    });
  return LocalVerificationLedger.open(
    options.stateDir,
    ledgerFileName(connection.serviceIdentity, connection.apiKey),
    options.cacheFreshSince,
    options.runId,
  );
}

/** The team verification ledger's name for this service and key: the local one's file name without its decoration. */
function ledgerId(connection: Connection): string {
  return ledgerFileName(connection.serviceIdentity, connection.apiKey).replace(/^verify-|\.ndjson$/g, '');
}
