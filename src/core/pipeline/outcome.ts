import type { RunContext } from '../../runtime/context.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import { verificationSnapshot, type VerificationSnapshot } from '../verification/open-verifier.js';
import { reportVerification } from '../verification/report.js';
import { reportCutDomains } from '../shared/caveats.js';
import type { RunSummary } from '../shared/runner.js';
import { newVerificationRun, type VerificationRun } from '../verification/verifier.js';
import type { Counters } from './state/checkpoint.js';

export interface PipelineOutcome {
  parameters: Record<string, unknown>;
  runId: string;
  resumed: boolean;
  startedAt: number;
  counters: Counters;
  verification: VerificationRun | undefined;
  verifyBudget: number | undefined;
  noMatchReason: string | null;
  output: string | undefined;
}

/** The pipeline's --summary record: the committed counts, so a resumed run's record covers the whole run. */
export function pipelineSummary(outcome: PipelineOutcome): RunSummary {
  const { counters, verification: run } = outcome;
  return {
    command: 'pipeline',
    parameters: outcome.parameters,
    run_id: outcome.runId,
    resumed: outcome.resumed,
    started_at: new Date(outcome.startedAt).toISOString(),
    companies_seen: counters.companies_seen,
    contacts: counters.contacts,
    domains: { with_contacts: counters.domains_with_contacts, truncated_at_limit: counters.truncated_at_limit },
    verification: verificationRecord(run, outcome.verifyBudget),
    no_match_reason: outcome.noMatchReason,
    output: outcome.output ?? null,
  };
}

/** The summary's verification: the units charged, and the most that may have been (units_left never overstates). */
function verificationRecord(run: VerificationRun | undefined, budget: number | undefined) {
  const snapshot = verificationSnapshot(run ?? newVerificationRun(budget));
  return {
    budget: budget ?? null,
    units_spent: snapshot.units_spent,
    units_spent_at_most: snapshot.units_spent_at_most,
    answers_lost: snapshot.answers_lost,
    idempotency: snapshot.idempotency,
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
