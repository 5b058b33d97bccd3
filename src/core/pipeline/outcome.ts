import type { RunContext } from '../../runtime/context.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import type { VerificationSnapshot } from '../verification/open-verifier.js';
import { reportVerification } from '../verification/report.js';
import { reportCutDomains } from '../shared/caveats.js';
import type { VerificationRun } from '../verification/verifier.js';
import type { Counters } from './state/checkpoint.js';

/** The pipeline's --summary verification details: what was spent of the budget, what came from the ledger. */
export function verificationRecord(
  run: VerificationRun | undefined,
  budget: number | undefined,
): Record<string, unknown> {
  return {
    budget: budget ?? null,
    units_spent: run?.unitsSpent ?? 0,
    units_left: run && budget !== undefined ? budget - run.unitsSpent : null,
    from_cache: run?.fromCache ?? 0,
    unchecked: run?.unchecked ?? 0,
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
      (verification !== undefined ? ` · ${countOf(verification.units_spent, 'unit')} spent` : '') +
      (onlyNew ? ` · ${formatCount(contacts.alreadyExported)} already exported before` : ''),
  );
  if (verification) reportVerification(ctx, verification);
  // Nothing new is a week going as planned, not a warning: cron stays silent (the summary counts it).
  if (onlyNew && contacts.written === 0)
    ctx.reporter.info('No new leads since the last run; wrote a header-only result.');
  reportCutDomains(ctx.reporter, counters.truncated_at_limit);
}
