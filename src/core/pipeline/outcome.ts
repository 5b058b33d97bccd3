import type { RunContext } from '../../runtime/context.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import type { VerificationSnapshot } from '../verification/open-verifier.js';
import { reportVerification } from '../verification/report.js';
import { reportCutDomains } from '../shared/caveats.js';
import type { RunSummary } from '../shared/runner.js';
import type { VerificationRun } from '../verification/verifier.js';
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
    verification: {
      budget: outcome.verifyBudget ?? null,
      units_spent: run?.unitsSpent ?? 0,
      units_left: run && outcome.verifyBudget !== undefined ? outcome.verifyBudget - run.unitsSpent : null,
      from_cache: run?.fromCache ?? 0,
      unchecked: run?.unchecked ?? 0,
    },
    no_match_reason: outcome.noMatchReason,
    output: outcome.output ?? null,
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
