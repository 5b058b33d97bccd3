import type { ExportedBefore } from '../state-store/types.js';
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
  exported: { job: string | undefined; by: ExportedBefore[] | undefined } = { job: undefined, by: undefined },
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
  if (onlyNew && contacts.written === 0) reportNothingNew(ctx, contacts.alreadyExported, exported);
  reportCutDomains(ctx.reporter, counters.truncated_at_limit);
}

/**
 * --only-new left nothing: whose exports did it, with the count. Leads another job exported are a
 * caveat (a new job that writes nothing is a surprise); this job's own earlier runs are a quiet week.
 */
function reportNothingNew(
  ctx: RunContext,
  leads: number,
  exported: { job: string | undefined; by: ExportedBefore[] | undefined },
): void {
  const by = exported.by ?? [];
  const runOf = (entry: ExportedBefore) =>
    entry.run === undefined
      ? ''
      : ` (run ${entry.run}${entry.finishedAt === undefined ? ', unfinished' : `, ${entry.finishedAt}`})`;
  const whose = by.map((entry) =>
    entry.job === undefined || entry.job === exported.job
      ? `${formatCount(entry.leads)} by earlier runs of this job${entry.job === undefined ? '' : ` ${entry.job}`}` +
        (entry.job === undefined && entry.run !== undefined ? `, the last${runOf(entry)}` : runOf(entry))
      : `${formatCount(entry.leads)} by job ${entry.job}${runOf(entry)}`,
  );
  if (whose.length === 0) {
    ctx.reporter.info('No new leads since the last run; wrote a header-only result.');
    return;
  }
  const line =
    `No new leads: all ${countOf(leads, 'lead')} found had already been exported, ${whose.join('; ')}; ` +
    'wrote a header-only result.';
  // Another job's exports change what this output means: said everywhere but under -q, as a caveat.
  if (by.some((entry) => entry.job !== undefined && entry.job !== exported.job)) ctx.reporter.caveat(line);
  else ctx.reporter.info(line);
}
