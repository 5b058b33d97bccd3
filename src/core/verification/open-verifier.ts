import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { ProspectClient } from '../../api/index.js';
import { UsageError } from '../../exit-codes.js';
import { makeDirectoryDurable } from '../../io/atomic-file.js';
import { parseMaxAge } from '../../io/max-age.js';
import { assertOwnDirectory } from '../../io/own-directory.js';
import type { Connection } from '../../runtime/connection.js';
import type { RunContext } from '../../runtime/context.js';
import { newVerificationRun, Verifier, type VerificationRun } from './verifier.js';
import { ledgerFileName, LocalVerificationLedger } from './ledger.js';
import { cacheDirectory } from '../../config/paths.js';
import { teamStore } from '../state-store/index.js';
import type { VerificationLedger } from '../state-store/types.js';
import { AnswerSpool } from './spool.js';
import { spentLine, verificationSnapshot, type KeptIn, type VerificationSnapshot } from './report.js';

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
/** The counts a pipeline checkpoint keeps: what its ledger entries cannot tell a resumed run. */
export interface CheckpointedCounts {
  from_cache: number;
  unchecked: number;
  answers_lost: number;
  may_also_have_cost: number;
  idempotency_claimed: boolean;
}

export function verificationCounts(run: VerificationRun): CheckpointedCounts {
  return {
    from_cache: run.fromCache,
    unchecked: run.unchecked,
    answers_lost: run.answersLost,
    may_also_have_cost: run.mayAlsoHaveCost,
    idempotency_claimed: run.idempotencyClaimed,
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
  const spool = await settleSpool(ctx, connection, { ledger, resume, runId: options.runId });
  const run = newVerificationRun(options.budget, options.concurrency);
  if (options.runId !== undefined && resume) resumeSpend(run, resume, options.runId, options.countedBefore);
  const verifier: Verifier = new Verifier(client, { ledger, resume, spool }, run, {
    concurrency: options.concurrency,
    runId: options.runId,
    // A pipeline run's id, so a resume sends the keys of its first part; else a fresh one per run.
    keyScope: options.runId ?? randomUUID(),
    reuseCached: options.useCache,
    signal: ctx.signal,
    verifyStatuses: connection.contract?.verifyStatuses,
  });
  const kept: KeptIn = resume ? (options.remoteState ? 'team' : 'state') : ledger.shared ? 'ledger' : 'nowhere';
  ctx.spentSoFar = () => spentLine(verificationSnapshot(verifier.run), kept, verifier.run.spooled);
  return Object.assign(verifier, {
    snapshot: () => verificationSnapshot(verifier.run),
    close: () => {
      void ledger.close();
      void resume?.close();
      spool.close();
    },
  });
}

/**
 * What a resumed run's earlier parts spent, against the same budget: the answers they kept, and what
 * the rest may have cost. That is the larger of the checkpoint's count (as of its last page) and the
 * write-ahead record's: each call sent beyond the address's kept answer, a run killed before it
 * recorded an answer included. Neither count can say less than the service charged.
 */
export function resumeSpend(
  run: VerificationRun,
  resume: Pick<VerificationLedger, 'countPaidBy' | 'get' | 'sentBy'>,
  runId: string,
  counted: CheckpointedCounts | undefined,
): void {
  run.unitsSpent = resume.countPaidBy(runId);
  let unanswered = 0;
  for (const [key, calls] of resume.sentBy?.(runId) ?? [])
    unanswered += Math.max(0, calls - (resume.get(key)?.run === runId ? 1 : 0));
  run.answersLost = Math.max(counted?.answers_lost ?? 0, unanswered);
  run.mayAlsoHaveCost = Math.max(counted?.may_also_have_cost ?? 0, unanswered);
  if (!counted) return;
  run.fromCache = counted.from_cache;
  run.unchecked = counted.unchecked;
  run.idempotencyClaimed = counted.idempotency_claimed;
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
  const ledger = team
    ? await team.openVerificationLedger(ledgerId(connection), { freshSince: options.cacheFreshSince })
    : LocalVerificationLedger.open(
        ownCacheDirectory(ctx),
        ledgerFileName(connection.serviceIdentity, connection.apiKey),
        options.cacheFreshSince,
      );
  // Answers an earlier run paid for but could not store: in the ledger before anything is counted or paid.
  await answerSpool(ctx, connection).drainInto(ledger);
  return ledger;
}

/** The user's cache directory, made if need be, refused if another user could swap its files and read them. */
function ownCacheDirectory(ctx: RunContext): string {
  const directory = cacheDirectory(ctx.env);
  makeDirectoryDurable(directory, 0o700);
  assertOwnDirectory(directory, `the verification cache ${directory} (PROSPECT_CACHE_DIR)`);
  return directory;
}

/**
 * The spool of this service and key, in the cache directory: judged before it is read (another user's
 * file could plant answers in the team store), made only when an answer is spooled.
 */
function answerSpool(ctx: RunContext, connection: Connection): AnswerSpool {
  const directory = cacheDirectory(ctx.env);
  if (existsSync(directory)) assertOwnDirectory(directory, `the verification cache ${directory} (PROSPECT_CACHE_DIR)`);
  return AnswerSpool.beside(directory, ledgerFileName(connection.serviceIdentity, connection.apiKey));
}

/**
 * The run's spool, once the answers earlier runs spooled are stored: the run's own (a resumed
 * pipeline's) in its resume ledger too, so they count as spent, and the spool removed once a
 * shared ledger keeps them all (with --no-cache it stays for a run that keeps them).
 */
async function settleSpool(
  ctx: RunContext,
  connection: Connection,
  stores: { ledger: VerificationLedger; resume: VerificationLedger | undefined; runId: string | undefined },
): Promise<AnswerSpool> {
  const spool = answerSpool(ctx, connection);
  const { size } = spool.read();
  if (size === 0) return spool;
  const { resume, runId } = stores;
  if (resume && runId !== undefined) await spool.drainInto(resume, (answer) => answer.run === runId);
  if (stores.ledger.shared) spool.removeIfUnchanged(size);
  return spool;
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
