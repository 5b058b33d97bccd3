import type { RunContext } from '../../runtime/context.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import { reportVerification, verificationSnapshot, type VerificationSnapshot } from '../verification/report.js';
import { reportCutDomains } from '../shared/caveats.js';
import { newVerificationRun, type VerificationRun } from '../verification/verifier.js';
import type { Counters } from './state/checkpoint.js';

/** The summary's verification: the units charged, and the most that may have been (units_left never overstates). */
export function verificationRecord(run: VerificationRun | undefined, budget: number | undefined) {
  const snapshot = verificationSnapshot(run ?? newVerificationRun(budget, 0));
  return {
    budget: budget ?? null,
    units_spent: snapshot.units_spent,
    units_spent_at_most: snapshot.units_spent_at_most,
    answers_lost: snapshot.answers_lost,
    idempotency: snapshot.idempotency,
    kill_may_charge_again: snapshot.kill_may_charge_again,
    units_left: run && budget !== undefined ? Math.max(0, budget - snapshot.units_spent_at_most) : null,
    from_cache: snapshot.from_cache,
    unchecked: snapshot.unchecked,
  };
}

/** The lines on stderr after a successful run. */
export function reportPipeline(
  ctx: RunContext,
  counters: Counters,
  verification: VerificationSnapshot | undefined,
  onlyNew: boolean,
): void {
  const { contacts } = counters;
  ctx.reporter.info(
    `${countOf(contacts.written, 'lead')} from ${countOf(counters.companies_seen, 'company', 'companies')} · ` +
      `fresh ${formatCount(contacts.fresh)}, stale ${formatCount(contacts.stale)}, ` +
      `unknown ${formatCount(contacts.unknown)}, no email ${formatCount(contacts.none)}` +
      (verification !== undefined ? ` · ${countOf(verification.units_spent, 'unit')} charged` : '') +
      (onlyNew ? ` · ${formatCount(contacts.alreadyExported)} already exported before` : ''),
  );
  if (verification) reportVerification(ctx, verification);
  // Nothing new is a week going as planned, not a warning: cron stays silent (the summary counts it).
  if (onlyNew && contacts.written === 0)
    ctx.reporter.info('No new leads since the last run; wrote a header-only result.');
  reportCutDomains(ctx.reporter, counters.truncated_at_limit);
}
