/** The dry run's report: the estimate as the lines a person reads on stdout. */
import { countOf, formatCount } from '../../ui/format-count.js';
import { formatDuration } from '../../ui/duration.js';
import type { PipelineOptions } from './options.js';
import type { DryRunEstimate } from './dry-run-estimate.js';

export function dryRunText(estimate: DryRunEstimate, options: PipelineOptions, budget: number | undefined): string {
  const about = (n: number) => `about ${formatCount(n)}`;
  const lines = [
    `Dry run: nothing was spent and nothing was written.`,
    `Set: ${countOf(estimate.companies, 'company', 'companies')}` +
      (estimate.contacts === undefined
        ? ' (estimated from the sample)'
        : `, ${countOf(estimate.contacts, 'named contact')}`) +
      ` (${estimate.countedBy === 'service' ? 'counted by the service' : 'the service counted a wider set'}).`,
    ...(estimate.excludedCompanies === null
      ? []
      : [
          `--exclude-domains: about ${formatCount(estimate.excludedCompanies)} of them are left out ` +
            '(estimated from the pages sampled).',
        ]),
    ...(estimate.maxCompanies === null
      ? []
      : [
          `--max ${formatCount(estimate.maxCompanies)}: the run stops after that many companies; ` +
            'the figures below are for them.',
        ]),
    `Sample: ${countOf(estimate.sample.companies, 'company', 'companies')} of ` +
      `${countOf(estimate.sample.strata, 'employee range')}, ${countOf(estimate.sample.contacts, 'contact')} in ` +
      `${countOf(estimate.sample.calls, 'contacts call')}; the figures below are scaled from it, range by range.`,
    `Leads written: ${about(estimate.leads)}.`,
  ];
  if (options.onlyNew)
    lines.push(`--only-new leaves out ${about(estimate.alreadyExported)} leads exported by earlier runs.`);
  lines.push(
    `Stale or undated addresses: ${(estimate.staleShare * 100).toFixed(1)}% of the leads ` +
      `(--max-age ${options.maxAge}).`,
  );
  if (options.stale === 'verify') {
    const cap = budget === undefined ? 'no cap' : `--verify-budget ${formatCount(budget)}`;
    lines.push(
      `Verification: ${about(estimate.addressesToVerify)} addresses to check, ` +
        `${about(estimate.alreadyPaid)} already paid for in the ledger (estimated from the sample); ` +
        `${about(estimate.units)} ${estimate.units === 1 ? 'unit' : 'units'} to pay (${cap}).`,
    );
  }
  lines.push(
    `Time: about ${formatDuration(Math.max(1, estimate.seconds))} at the latency observed ` +
      `(--concurrency ${formatCount(options.concurrency)}).`,
  );
  return `${lines.join('\n')}\n`;
}
