import { z } from 'zod';
import { UnanswerableError } from '../../api/index.js';
import { ExitCode, knownFailure } from '../../exit-codes.js';
import { checkOutputPath } from '../../io/output.js';
import { createApiClient } from '../../runtime/api-client.js';
import { resolveConnection } from '../../runtime/connection.js';
import type { RunContext } from '../../runtime/context.js';
import { countOf } from '../../ui/format-count.js';
import { normalizeCountries, validateCompanyFilters, withCompanyFilters } from '../company-filters.js';
import { contactOptions, parseContactFlags } from '../contact-options.js';
import { contactRowsFor } from '../domain-rows.js';
import type { ContactRow } from '../contact-rows.js';
import { fetchContactsInOrder } from '../contacts-fanout.js';
import { outputOptions, presetOption, summaryOption, verifyCacheOptions } from '../job-options.js';
import { leadKey } from '../pipeline/lead-key.js';
import { mapInOrder } from '../ordered-pool.js';
import { countCompany, passPage } from '../pipeline/checkpoint.js';
import { listCompanies } from '../pipeline/company-listing.js';
import { exportedKeys, recordSuccess } from '../pipeline/exports-ledger.js';
import { LeadOutput } from '../pipeline/lead-output.js';
import { pipelineSummary, reportPipeline } from '../pipeline/outcome.js';
import { planPipeline } from '../pipeline/plan.js';
import { openRunState } from '../pipeline/run-state.js';
import { SpendConsent } from '../verification/consent.js';
import { askFirst, openVerifier } from '../verification/open-verifier.js';
import { runJob } from './runner.js';

/** `prospect pipeline`: its flags (the input) and the job's options (the output). */
export const pipelineOptionsSchema = withCompanyFilters({
  ...contactOptions,
  ...outputOptions,
  ...presetOption,
  ...summaryOption,
  ...verifyCacheOptions,
  state: z.string().optional(),
  onlyNew: z.boolean().default(false),
  allowEmpty: z.boolean().default(false),
  dryRun: z.boolean().default(false),
});
export type PipelineFlags = z.input<typeof pipelineOptionsSchema>;
export type PipelineOptions = z.output<typeof pipelineOptionsSchema>;

/**
 * companies → contacts → freshness → verification as one export: company pages feed the contacts
 * fan-out while they arrive; with --state each finished page is checkpointed, so a run that dies
 * resumes where it stopped and never pays for a verification twice.
 */
export async function runPipeline(ctx: RunContext, flags: PipelineFlags): Promise<number> {
  if (flags.dryRun) return (await import('./pipeline-dry-run.js')).runPipelineDryRun(ctx, flags);
  const startedAt = Date.now();
  const parsed = pipelineOptionsSchema.parse(flags);
  validateCompanyFilters(parsed.filters);
  const options = { ...parsed, filters: await normalizeCountries(parsed.filters) };
  const consent = options.stale === 'verify' ? await SpendConsent.decide(ctx, { yes: options.yes, budget: options.verifyBudget }) : undefined;
  const plan = planPipeline(ctx, options, consent?.budget);
  consent?.assertMayPay('pipeline --stale verify');
  const verifyBudget = consent?.budget;
  await checkOutputPath(options.output);
  await checkOutputPath(options.summary);

  const { state, checkpoint, resumed } = await openRunState(ctx, options.state, plan.fingerprint);
  const now = new Date(checkpoint.now);
  const settings = parseContactFlags(options, now);
  const counters = checkpoint.counters;

  const connection = await resolveConnection(ctx);
  const client = createApiClient(ctx, connection);
  const asking = askFirst(consent);
  const verifier = asking
    ? openVerifier(ctx, client, connection, {
        useCache: options.cache,
        cacheFreshSince: plan.cacheFreshSince,
        budget: verifyBudget,
        concurrency: settings.concurrency,
        stateDir: state?.dir,
        runId: state ? checkpoint.run_id : undefined,
        countedBefore: state ? counters.verification : undefined,
        askFirst: asking,
      })
    : undefined;
  if (verifier) ctx.onCleanup(() => verifier.close());
  const exported = options.onlyNew && state ? await exportedKeys(state) : undefined;
  const leads = await LeadOutput.open(ctx, { format: plan.format, columns: plan.columns, escapeFormulas: options.escapeFormulas, output: options.output }, state, checkpoint, resumed);

  let noMatchReason: string | null = null;
  /** The rows the checkpoint on disk covers: what a resume starts from (the in-memory count runs ahead of it). */
  let committedRows = checkpoint.rows_written;
  /** The service would not answer before any company was written: there is nothing to resume. */
  const noCompanyMatched = (error: unknown): error is UnanswerableError => error instanceof UnanswerableError && counters.companies_seen === 0;
  /** Valid filters that match nobody (exit 3), the one failure --allow-empty makes an empty success; never a typo (exit 2). */
  const matchedNobody = (error: unknown): error is UnanswerableError => noCompanyMatched(error) && knownFailure(error)?.exitCode === ExitCode.unanswerable;
  const publish = async (record: { rows: number; output?: string | null; only_new?: boolean; no_match_reason?: string }) => {
    await leads.publish();
    if (state) await recordSuccess(state, { run_id: checkpoint.run_id, finished_at: new Date().toISOString(), ...record });
  };

  return runJob(ctx, {
    startedAt,
    progress: 'Building the lead list',
    output: leads,
    summary: {
      path: options.summary,
      record: () =>
        pipelineSummary({
          parameters: plan.parameters,
          runId: checkpoint.run_id,
          resumed,
          startedAt,
          counters,
          verification: verifier?.run,
          verifyBudget,
          noMatchReason,
          output: options.output,
        }),
    },
    async work(progress) {
      if (asking) asking.suspend = (during) => progress.suspend(during);
      const isNew = exported ? (row: ContactRow) => !exported.has(leadKey(row)) : undefined;
      const companies = listCompanies(client, options.filters, checkpoint);
      const answered = fetchContactsInOrder(client, companies, (item) => item.company.domain.toLowerCase(), settings);
      const rowsByCompany = mapInOrder(answered, settings.concurrency * 2, async (found) => ({
        found,
        result: await contactRowsFor(found.contacts, found.source, settings, now, verifier, isNew),
      }));
      for await (const { found, result } of rowsByCompany) {
        await leads.write(result.rows.map((row) => ({ ...row, company: found.item.company })));
        countCompany(checkpoint, found, result);
        const pageEnd = found.item.pageEnd;
        if (pageEnd && leads.keepsCheckpoints) {
          passPage(checkpoint, pageEnd.positions, verifier ? { from_cache: verifier.run.fromCache, unchecked: verifier.run.unchecked } : counters.verification);
          await leads.commitPage(checkpoint);
          committedRows = checkpoint.rows_written;
        }
        const units = verifier ? ` · ${countOf(verifier.run.unitsSpent, 'unit')} spent` : '';
        progress.update({ done: counters.companies_seen, total: found.item.listingTotal, noun: 'companies', detail: `${countOf(counters.contacts.written, 'lead')}${units}` });
      }
      // No page at all (nothing listed) leaves no provenance to end the document with.
      await leads.writer.finish(checkpoint.meta ?? { source: undefined, scope: undefined });
      await publish({ rows: checkpoint.rows_written, output: options.output ?? null, only_new: options.onlyNew });
    },
    async onFailure(error) {
      if (noCompanyMatched(error)) {
        if (matchedNobody(error)) noMatchReason = error.message;
        if (!(options.allowEmpty && matchedNobody(error))) await state?.discardCurrent();
      } else if (state && !(error instanceof UnanswerableError)) {
        // A cleanup runs after the error line is printed, so the hint reads as the last word.
        ctx.onCleanup(() => {
          ctx.reporter.notice(`the checkpoint in ${state.dir} keeps ${countOf(committedRows, 'committed row')}; run the same command again to resume.`);
        });
      }
    },
    async writeEmptyResult(error) {
      if (!(matchedNobody(error) && options.allowEmpty)) return false;
      await leads.writer.finish();
      await publish({ rows: 0, no_match_reason: error.message });
      return true;
    },
    written: () => ({ rows: checkpoint.rows_written, noun: ['lead', 'leads'], path: options.output }),
    report: () => reportPipeline(ctx, counters, verifier?.snapshot(), options.onlyNew),
  });
}
