import type { RunContext } from '../../runtime/context.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import type { VerificationRun } from './verifier.js';

export interface VerificationSnapshot {
  /** Units charged: answered paid calls. */
  units_spent: number;
  /**
   * The most the service may have charged: units_spent and the units the lost answers may have cost
   * (equal to units_spent when no answer was lost), a resumed run's killed part included.
   */
  units_spent_at_most: number;
  /** Paid attempts whose answer was lost after the request went out (or never recorded by a killed run). */
  answers_lost: number;
  /** Whether the service said it honours Idempotency-Key (Idempotent-Replayed, row 27): never relied on (row 23). */
  idempotency: 'claimed, not relied on' | 'not claimed';
  /** The most a SIGKILL of this run can make a later run pay again: its paid calls in flight (--concurrency). */
  kill_may_charge_again: number;
  from_cache: number;
  unchecked: number;
  /** Statuses the service sent that no vocabulary names, read as `unknown`; only when there were any. */
  unknown_statuses?: Record<string, number>;
  /** The service's own words that are not the contract's, each with the verdict it was read as; only when any. */
  service_words?: Record<string, { read_as: string; count: number }>;
}

/** The run's counts as the summary and the closing line give them. */
export function verificationSnapshot(run: VerificationRun): VerificationSnapshot {
  return {
    units_spent: run.unitsSpent,
    units_spent_at_most: run.unitsSpent + run.mayAlsoHaveCost,
    answers_lost: run.answersLost,
    idempotency: run.idempotencyClaimed ? 'claimed, not relied on' : 'not claimed',
    kill_may_charge_again: run.inFlightAtMost,
    from_cache: run.fromCache,
    unchecked: run.unchecked,
    ...(run.unknownStatuses.size > 0 ? { unknown_statuses: Object.fromEntries(run.unknownStatuses) } : {}),
    ...(run.serviceWords.size > 0 ? { service_words: Object.fromEntries(run.serviceWords) } : {}),
  };
}

/**
 * The verification lines after a run, the same for every command that verifies: what was spent
 * (a detail for the terminal), and caveats that reach cron too: when the budget left addresses
 * unchecked ("verified 100 of 349; 249 left unchecked (budget)"), and when answers lost on the way
 * back may have cost more than the units counted ("at most 23 units charged ...").
 */
export function reportVerification(ctx: RunContext, snapshot: VerificationSnapshot): void {
  const { units_spent, from_cache, unchecked } = snapshot;
  const checked = units_spent + from_cache;
  if (checked + unchecked + snapshot.answers_lost === 0) return;
  ctx.reporter.info(
    `Verified ${countOf(checked, 'address', 'addresses')}: ${countOf(units_spent, 'unit')} charged, ` +
      `${formatCount(from_cache)} already paid for.`,
  );
  const uncertain = mostCharged(snapshot);
  if (uncertain !== undefined) ctx.reporter.caveat(uncertain);
  if (unchecked > 0)
    ctx.reporter.caveat(
      `verified ${formatCount(checked)} of ${formatCount(checked + unchecked)}; ` +
        `${formatCount(unchecked)} left unchecked (budget)`,
    );
}

/** The caveat when the service may have charged more than the answers show; undefined when it cannot have. */
function mostCharged(snapshot: VerificationSnapshot): string | undefined {
  const { units_spent, units_spent_at_most, answers_lost } = snapshot;
  if (units_spent_at_most <= units_spent) return undefined;
  // Idempotent-Replayed is never relied on (contract row 23): each lost answer may have been charged.
  const why =
    `${countOf(answers_lost, 'answer')} to paid calls never arrived, and each may have been charged` +
    (snapshot.idempotency === 'not claimed'
      ? ''
      : ' (the service says it honours Idempotency-Key; that is not relied on)');
  const most = countOf(units_spent_at_most, 'unit');
  return `at most ${most} charged, ${formatCount(units_spent)} of them for certain: ${why}`;
}

/** Where a run's paid results are kept, for the last line of a run that stops (spentSoFar). */
export type KeptIn = 'state' | 'team' | 'ledger' | 'nowhere';

const KEPT_WORDS: Record<KeptIn, string> = {
  state: 'their results are kept in the --state directory: the same command again resumes without paying for them',
  team: 'their results are kept in the team store: the same command again resumes without paying for them',
  ledger: 'their results are kept in the verification ledger: a re-run within --cache-ttl does not pay for them again',
  nowhere: 'their results are not kept (--no-cache): a re-run pays for them again',
};

/**
 * The last line of a run that failed or was stopped after paying: what it spent, for certain and at
 * most, and whether a re-run pays for it again; undefined when it cannot have spent anything.
 */
export function spentLine(snapshot: VerificationSnapshot, kept: KeptIn, spooled = 0): string | undefined {
  const { units_spent, units_spent_at_most } = snapshot;
  if (units_spent_at_most === 0) return undefined;
  const most = units_spent_at_most > units_spent ? ` (at most ${formatCount(units_spent_at_most)})` : '';
  // The store failed under answers in flight: they are kept all the same, until the next run stores them.
  const spool =
    spooled === 0
      ? ''
      : `, ${countOf(spooled, 'answer')} the store could not take in the local spool, which the next run reads first`;
  // Only answers read are kept: a run whose every paid answer was lost or unreadable has none to keep.
  const keptWords = units_spent === 0 ? 'no answer came back to keep: a re-run asks again' : KEPT_WORDS[kept];
  return `spent ${countOf(units_spent, 'unit')}${most} before the run stopped; ${keptWords}${spool}.`;
}
