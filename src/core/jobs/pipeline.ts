import { z } from 'zod';
import { resolve } from 'node:path';
import { UnanswerableError, type CompanyRow } from '../../api/index.js';
import { ExitCode, knownFailure } from '../../exit-codes.js';
import { writeFileAtomic } from '../../io/atomic-file.js';
import { checkOutputPath } from '../../io/output.js';
import { createApiClient, keepYoungGenerationSmall } from '../../runtime/api-client.js';
import { resolveConnection } from '../../runtime/connection.js';
import type { RunContext } from '../../runtime/context.js';
import { countOf } from '../../ui/format-count.js';
import { filtersRecord, normalizeCountries, validateCompanyFilters, withCompanyFilters } from '../company-filters.js';
import { contactOptions, parseContactFlags } from '../contact-options.js';
import { contactRowsFor } from '../domain-rows.js';
import type { ContactRow } from '../contact-rows.js';
import { callsText, fetchContactsInOrder, newFanoutStats } from '../contacts-fanout.js';
import { keepEmptyOption, outputOptions, presetOption, summaryOption, suppressionOptions, verifyCacheOptions } from '../job-options.js';
import { stoppedAtMaxLine } from '../caveats.js';
import { emptyContactRow } from '../keep-empty.js';
import { documentMeta, metaJson, runRecord } from '../provenance.js';
import { Suppression } from '../suppression.js';
import type { SetCount } from '../company-set-count.js';
import { mapInOrder } from '../ordered-pool.js';
import { countCompany, passPage } from '../pipeline/checkpoint.js';
import { listCompanies } from '../pipeline/company-listing.js';
import { markPublishing, recordSuccess } from '../pipeline/exports-ledger.js';
import { LeadOutput } from '../pipeline/lead-output.js';
import { pipelineSummary, reportPipeline } from '../pipeline/outcome.js';
import { planPipeline } from '../pipeline/plan.js';
import { openRunState } from '../pipeline/run-state.js';
import { SpendConsent } from '../verification/consent.js';
import { askFirst, openVerifier } from '../verification/open-verifier.js';
import { splitOptions } from '../company-partition.js';
import { runJob } from './runner.js';

/** `prospect pipeline`: its flags (the input) and the job's options (the output). */
export const pipelineOptionsSchema = withCompanyFilters({
  ...contactOptions,
  ...outputOptions,
  ...presetOption,
  ...summaryOption,
  ...verifyCacheOptions,
  ...suppressionOptions,
  ...keepEmptyOption,
  max: z.number().int().optional(),
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
  const suppression = await Suppression.load(ctx, options, { domains: true, emails: true });
  const plan = planPipeline(ctx, options, consent?.budget, suppression.parameters());
  consent?.assertMayPay('pipeline --stale verify');
  const verifyBudget = consent?.budget;
  await checkOutputPath(options.output);
  await checkOutputPath(options.summary);

  const { state, ledger, checkpoint, resumed } = await openRunState(ctx, options.state, plan.fingerprint, plan.formerFingerprints);
  const now = new Date(checkpoint.now);
  const settings = parseContactFlags(options, now);
  const counters = checkpoint.counters;

  const connection = await resolveConnection(ctx);
  const client = createApiClient(ctx, connection);
  keepYoungGenerationSmall();
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
  const leads = await LeadOutput.open(ctx, { format: plan.format, columns: plan.columns, escapeFormulas: options.escapeFormulas, output: options.output }, state, checkpoint, resumed);

  let noMatchReason: string | null = null;
  /** The rows the checkpoint on disk covers: what a resume starts from (the in-memory count runs ahead of it). */
  let committedRows = checkpoint.rows_written;
  /** The service would not answer before any company was written: there is nothing to resume. */
  const noCompanyMatched = (error: unknown): error is UnanswerableError => error instanceof UnanswerableError && counters.companies_seen === 0;
  /** Valid filters that match nobody (exit 3), the one failure --allow-empty makes an empty success; never a typo (exit 2). */
  const matchedNobody = (error: unknown): error is UnanswerableError => noCompanyMatched(error) && knownFailure(error)?.exitCode === ExitCode.unanswerable;
  const publish = async (record: { rows: number; output?: string | null; only_new?: boolean; no_match_reason?: string }) => {
    // Kept in the state before the output moves: a run that dies in between is recorded by the next one.
    const success = state ? await markPublishing(state, { run_id: checkpoint.run_id, finished_at: new Date().toISOString(), ...record }) : undefined;
    await leads.publish();
    if (options.output !== undefined) await writeFileAtomic(`${resolve(options.output)}.meta.json`, metaJson(runRecordNow()));
    if (state && ledger && success) await recordSuccess(state, ledger, success);
  };
  /** This run's contacts calls (a resumed run counts its own, not the earlier runs'). */
  const fanout = newFanoutStats();
  /** Where --max stopped the listing this run: what the service counted of the set, for the caveat. */
  let stoppedAt: SetCount | undefined;
  const runRecordNow = () => {
    const legacy = pipelineSummary({
      parameters: plan.parameters,
      runId: checkpoint.run_id,
      resumed,
      startedAt,
      counters,
      verification: verifier?.run,
      verifyBudget,
      noMatchReason,
      output: options.output,
    });
    return runRecord({
      command: 'pipeline',
      parameters: plan.parameters,
      startedAt,
      output: options.output,
      rows: checkpoint.rows_written,
      filters: filtersRecord(options.filters),
      meta: checkpoint.meta,
      stoppedAtMax: counters.stopped_at_max,
      excluded: suppression.record({ domains: counters.excluded.companies, emails: counters.excluded.contacts }),
      keptEmpty: options.keepEmpty ? counters.kept_empty : undefined,
      details: {
        run_id: checkpoint.run_id,
        resumed,
        companies_seen: counters.companies_seen,
        contacts: legacy['contacts'],
        domains: legacy['domains'],
        verification: legacy['verification'],
        calls: fanout.calls,
        rows_received: fanout.rows,
        no_match_reason: noMatchReason,
      },
    });
  };

  return runJob(ctx, {
    startedAt,
    progress: 'Building the lead list',
    output: leads,
    summary: { path: options.summary, record: runRecordNow },
    async work(progress) {
      if (asking) asking.suspend = (during) => progress.suspend(during);
      const keepNew = options.onlyNew && ledger ? (rows: ContactRow[]) => ledger.newOnly(rows) : undefined;
      // Where a company is accepted: an excluded domain is never sent to /contacts, and --max counts only the others.
      const accept = suppression.active ? (company: CompanyRow) => suppression.keepsDomain(company.domain) : undefined;
      const max = options.max === undefined ? undefined : options.max - counters.companies_seen;
      // The listing gets a quarter of --concurrency: a page of companies feeds about ten contacts calls,
      // so the contacts set the pace, and parts reading ahead at the default 4 would only wait in memory.
      const split = splitOptions(ctx.reporter, options.filters, Math.floor(settings.concurrency / 4));
      const excludedAfterLast = (excluded: number) => (counters.excluded.companies += excluded);
      const companies = listCompanies(client, options.filters, checkpoint, { accept, max, split, excludedAfterLast });
      const answered = fetchContactsInOrder(client, companies, (item) => item.company.domain.toLowerCase(), settings, fanout);
      const rowsByCompany = mapInOrder(answered, settings.concurrency * 2, async (found) => {
        // Where a contact is accepted: an excluded address is never verified, paid for or written.
        const contacts = suppression.keepContacts(found.contacts);
        const result = await contactRowsFor(contacts, found.source, settings, now, verifier, keepNew);
        const empty = options.keepEmpty && contacts.length === 0 ? [emptyContactRow(found.domain, settings, now)] : [];
        return { found, result, empty, excludedContacts: found.contacts.length - contacts.length };
      });
      for await (const { found, result, empty, excludedContacts } of rowsByCompany) {
        await writeLeads(leads, found.item.company, [...result.rows, ...empty]);
        countCompany(checkpoint, found, result);
        checkpoint.rows_written += empty.length;
        counters.kept_empty += empty.length;
        counters.excluded.companies += found.item.excluded ?? 0;
        counters.excluded.contacts += excludedContacts;
        if (found.item.stoppedAtMax) {
          counters.stopped_at_max = true;
          stoppedAt = found.item.stoppedAtMax;
        }
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
      await leads.writer.finish(documentMeta(plan.format, checkpoint.meta ?? { source: undefined, scope: undefined }, runRecordNow));
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
    report() {
      reportPipeline(ctx, counters, verifier?.snapshot(), options.onlyNew);
      ctx.reporter.info(`Contacts: ${callsText(fanout)}${resumed ? ' this run' : ''}.`);
      if (counters.kept_empty > 0) ctx.reporter.info(`${countOf(counters.kept_empty, 'company', 'companies')} without a named contact kept as empty rows (--keep-empty).`);
      if (counters.stopped_at_max && options.max !== undefined) ctx.reporter.caveat(stoppedAtMaxLine(options.max, stoppedAt ?? { exact: false, wider: undefined }));
      suppression.report(ctx, { domains: ['company', 'companies'], emails: ['contact', 'contacts'] }, { domains: counters.excluded.companies, emails: counters.excluded.contacts });
    },
  });
}

/**
 * A company's leads, written a slice at a time: a domain with more than 1,000 contacts at several
 * seniorities has up to 5,000. The writers format any batch a few rows at a time (writers.ts
 * writeInPieces), but the lead objects (each contact with its company) and, with --state, their
 * key text are made for the whole batch: written in one go, the 1,000,000-company pipeline (no
 * --state) peaked at 135 MB instead of 129 MB.
 */
const LEADS_PER_WRITE = 500;

async function writeLeads(leads: LeadOutput, company: CompanyRow, rows: ContactRow[]): Promise<void> {
  // A company without leads is still one write: the first write of a CSV puts its header out.
  let start = 0;
  do {
    await leads.write(rows.slice(start, start + LEADS_PER_WRITE).map((row) => ({ ...row, company })));
    start += LEADS_PER_WRITE;
  } while (start < rows.length);
}
