import { UnanswerableError, type CompanyRow } from '../../api/index.js';
import { EmptyResultError, ExitCode, knownFailure, UsageError } from '../../exit-codes.js';
import { writeFileAtomic } from '../../io/atomic-file.js';
import { checkOutputPath } from '../../io/output.js';
import { createApiClient } from '../../runtime/api-client.js';
import { resolveConnection } from '../../runtime/connection.js';
import type { RunContext } from '../../runtime/context.js';
import { countOf } from '../../ui/format-count.js';
import { filtersRecord, normalizeCountries, validateCompanyFilters } from '../companies/filters.js';
import { parseContactFlags } from '../contacts/options.js';
import { contactRowsFor } from '../contacts/domain-rows.js';
import type { ContactRow } from '../contacts/rows.js';
import { callsText, fetchContactsInOrder, newFanoutStats } from '../contacts/fanout.js';
import { atSeniority, leftOutText, stoppedAtMaxLine } from '../shared/caveats.js';
import { emptyContactRow } from '../shared/keep-empty.js';
import { documentMeta, metaJson, runRecord } from '../shared/provenance.js';
import { Suppression } from '../shared/suppression.js';
import type { SetCount } from '../companies/set-count.js';
import { mapInOrder } from '../../util/ordered-pool.js';
import { commitCheckpoint, countCompany, passPage, type Checkpoint, type Counters } from './state/checkpoint.js';
import { listCompanies } from './listing.js';
import { markPublishing, recordSuccess } from './state/exports-ledger.js';
import { LeadOutput } from './lead-output.js';
import { pipelineSummary, reportPipeline } from './outcome.js';
import { pipelineOptionsSchema, type PipelineFlags, type PipelineOptions } from './options.js';
import { planPipeline } from './plan.js';
import { checkNativeSqlite } from './state/native-sqlite.js';
import { openRunState, refuseToReplaceExports } from './run-state.js';
import { SpendConsent } from '../verification/consent.js';
import { openVerifier, paidCallsClient } from '../verification/open-verifier.js';
import { planSpend, verifiedInOrder } from '../verification/spend-plan.js';
import { splitOptions } from '../companies/split.js';
import { runJob } from '../shared/runner.js';

export { pipelineOptionsSchema, type PipelineFlags, type PipelineOptions };

/**
 * companies → contacts → freshness → verification as one export: company pages feed the contacts
 * fan-out while they arrive; with --state each finished page is checkpointed, so a run that dies
 * resumes where it stopped and never pays for a verification twice.
 */
export async function runPipeline(ctx: RunContext, flags: PipelineFlags): Promise<number> {
  // A broken install (better-sqlite3 without its binary) is told before anything else happens.
  if (flags.state !== undefined) await checkNativeSqlite();
  if (flags.dryRun) return (await import('./dry-run.js')).runPipelineDryRun(ctx, flags);
  const startedAt = Date.now();
  const parsed = pipelineOptionsSchema.parse(flags);
  validateCompanyFilters(parsed.filters);
  const options = { ...parsed, filters: await normalizeCountries(parsed.filters) };
  const consent =
    options.stale === 'verify'
      ? await SpendConsent.decide(ctx, { yes: options.yes, budget: options.verifyBudget })
      : undefined;
  const suppression = await Suppression.load(ctx, options, { domains: true, emails: true });
  const plan = planPipeline(ctx, options, consent?.budget, suppression.parameters());
  consent?.assertMayPay('pipeline --stale verify');
  const verifyBudget = consent?.budget;
  await checkOutputPath(options.output, { sidecar: '.meta.json' });
  await checkOutputPath(options.summary);

  const { state, ledger, checkpoint, resumed } = await openRunState(
    ctx,
    options.state,
    plan.fingerprint,
    plan.formerFingerprints,
  );
  if (options.onlyNew && ledger) refuseToReplaceExports(ledger, options.output, options.state!);
  const now = new Date(checkpoint.now);
  const settings = parseContactFlags(options, now);
  const counters = checkpoint.counters;

  const connection = await resolveConnection(ctx);
  const client = createApiClient(ctx, connection);
  const verifier = consent
    ? openVerifier(ctx, paidCallsClient(ctx, connection), connection, {
        useCache: options.cache,
        cacheFreshSince: plan.cacheFreshSince,
        budget: verifyBudget,
        concurrency: settings.concurrency,
        stateDir: state?.dir,
        runId: state ? checkpoint.run_id : undefined,
        countedBefore: state ? counters.verification : undefined,
      })
    : undefined;
  if (verifier) ctx.onCleanup(() => verifier.close());
  const spooled = spoolsLeads(checkpoint, resumed, consent, options.state);
  // A paying run's id is on disk before its first paid call, so a run stopped before its first page
  // resumes as the same run: its Idempotency-Keys and its paid results (even with --no-cache) are found again.
  if (verifier && state && !resumed) await commitCheckpoint(state, checkpoint, []);
  const leads = await LeadOutput.open(
    ctx,
    {
      format: plan.format,
      columns: plan.columns,
      escapeFormulas: options.escapeFormulas,
      bom: options.bom,
      output: options.output,
      spooled,
    },
    state,
    checkpoint,
    resumed,
  );

  let noMatchReason: string | null = null;
  /** The rows the checkpoint on disk covers: what a resume starts from (the in-memory count runs ahead of it). */
  let committedRows = checkpoint.rows_written;
  /** The service would not answer before any company was written: there is nothing to resume. */
  const noCompanyMatched = (error: unknown): error is UnanswerableError =>
    error instanceof UnanswerableError && counters.companies_seen === 0;
  /**
   * Valid filters that match nobody, or a listing that left no lead to write (exit 3): the one failure
   * --allow-empty makes an empty success; never a typo (exit 2).
   */
  const matchedNobody = (error: unknown): error is Error =>
    error instanceof EmptyResultError ||
    (noCompanyMatched(error) && knownFailure(error)?.exitCode === ExitCode.unanswerable);
  const publish = async (record: {
    rows: number;
    output?: string | null;
    only_new?: boolean;
    no_match_reason?: string;
  }) => {
    // Kept in the state before the output moves: a run that dies in between is recorded by the next one.
    const outputPath = leads.filePath;
    const success = state
      ? await markPublishing(state, {
          run_id: checkpoint.run_id,
          finished_at: new Date().toISOString(),
          ...record,
          output_path: outputPath ?? null,
        })
      : undefined;
    await leads.publish();
    const sidecar = leads.sidecarPath('.meta.json');
    if (sidecar !== undefined) await writeFileAtomic(sidecar, metaJson(runRecordNow()));
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
      const keepNew = options.onlyNew && ledger ? (rows: ContactRow[]) => ledger.newOnly(rows) : undefined;
      // Where a company is accepted: an excluded domain is never sent to /contacts, and --max counts only the others.
      const accept = suppression.active ? (company: CompanyRow) => suppression.keepsDomain(company.domain) : undefined;
      const max = options.max === undefined ? undefined : options.max - counters.companies_seen;
      // The listing gets a quarter of --concurrency: a page of companies feeds about ten contacts calls,
      // so the contacts set the pace, and parts reading ahead at the default 4 would only wait in memory.
      const split = splitOptions(ctx.reporter, options.filters, Math.floor(settings.concurrency / 4));
      const excludedAfterLast = (excluded: number) => (counters.excluded.companies += excluded);
      const companies = listCompanies(client, options.filters, checkpoint, { accept, max, split, excludedAfterLast });
      const answered = fetchContactsInOrder(
        client,
        companies,
        (item) => item.company.domain.toLowerCase(),
        settings,
        fanout,
      );
      const rowsByCompany = mapInOrder(answered, settings.concurrency * 2, async (found) => {
        // Where a contact is accepted: an excluded address is never verified, paid for or written.
        const contacts = suppression.keepContacts(found.contacts);
        const result = await contactRowsFor(
          contacts,
          found.source,
          settings,
          now,
          spooled ? undefined : verifier,
          keepNew,
        );
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
          passPage(
            checkpoint,
            pageEnd.positions,
            verifier
              ? { from_cache: verifier.run.fromCache, unchecked: verifier.run.unchecked }
              : counters.verification,
          );
          await leads.commitPage(checkpoint);
          committedRows = checkpoint.rows_written;
        }
        const units = verifier ? ` · ${countOf(verifier.run.unitsSpent, 'unit')} spent` : '';
        progress.update({
          done: counters.companies_seen,
          total: progressTotal(found.item.listingTotal, options.max),
          noun: 'companies',
          detail: `${countOf(counters.contacts.written, 'lead')}${units}`,
        });
      }
      // --only-new with every lead exported before is a week with nothing new, not a set that matches nobody.
      if (checkpoint.rows_written === 0 && counters.contacts.alreadyExported === 0)
        throw new EmptyResultError(noLeadReason(counters, settings.seniority));
      if (spooled && verifier && consent)
        await planSpend(leads.spool!.rows(), verifier, consent, (during) => progress.suspend(during));
      // No page at all (nothing listed) leaves no provenance to end the document with.
      await leads.finish(
        documentMeta(plan.format, checkpoint.meta ?? { source: undefined, scope: undefined }, runRecordNow),
        verifier &&
          ((rows) =>
            verifiedInOrder(rows, verifier, settings.concurrency * 4, (done) =>
              progress.update({
                done,
                total: checkpoint.rows_written,
                noun: 'leads verified and written',
                detail: `${countOf(verifier.run.unitsSpent, 'unit')} spent`,
              }),
            )),
      );
      await publish({ rows: checkpoint.rows_written, output: options.output ?? null, only_new: options.onlyNew });
    },
    async onFailure(error) {
      // A paid call already sent is let finish and kept in the state: the resume must not pay for it again.
      await verifier?.settle();
      if (matchedNobody(error)) {
        noMatchReason = error.message;
        if (!options.allowEmpty) await state?.discardCurrent();
      } else if (noCompanyMatched(error)) {
        await state?.discardCurrent();
      } else if (state && !(error instanceof UnanswerableError)) {
        // A cleanup runs after the error line is printed, so the hint reads as the last word.
        ctx.onCleanup(() => {
          ctx.reporter.notice(
            `the checkpoint in ${state.dir} keeps ${countOf(committedRows, 'committed row')}; run the same command again to resume.`,
          );
        });
      }
    },
    async writeEmptyResult(error) {
      if (!(matchedNobody(error) && options.allowEmpty)) return false;
      // A listing that ran has its provenance to end the document with; a refused one has none.
      await leads.finish(
        error instanceof EmptyResultError
          ? documentMeta(plan.format, checkpoint.meta ?? { source: undefined, scope: undefined }, runRecordNow)
          : undefined,
      );
      await publish({ rows: 0, no_match_reason: error.message });
      return true;
    },
    written: () => ({ rows: checkpoint.rows_written, noun: ['lead', 'leads'], path: options.output }),
    report() {
      reportPipeline(ctx, counters, verifier?.snapshot(), options.onlyNew);
      ctx.reporter.info(`Contacts: ${callsText(fanout)}${resumed ? ' this run' : ''}.`);
      if (counters.kept_empty > 0)
        ctx.reporter.info(
          `${countOf(counters.kept_empty, 'company', 'companies')} without a named contact kept as empty rows (--keep-empty).`,
        );
      if (counters.stopped_at_max && options.max !== undefined)
        ctx.reporter.caveat(stoppedAtMaxLine(options.max, stoppedAt ?? { exact: false, wider: undefined }));
      suppression.report(
        ctx,
        { domains: ['company', 'companies'], emails: ['contact', 'contacts'] },
        { domains: counters.excluded.companies, emails: counters.excluded.contacts },
      );
    },
  });
}

/**
 * Whether the leads wait in a spool, unverified, until every address is known (spend-plan.ts): a cap
 * goes to the oldest addresses, and a question states the exact count. --yes without a cap verifies
 * as leads arrive. A resumed run keeps the way its checkpoint's files were written; one started with
 * --yes is not resumed without it, since it would pay as leads arrive without asking.
 */
function spoolsLeads(
  checkpoint: Checkpoint,
  resumed: boolean,
  consent: SpendConsent | undefined,
  stateDir: string | undefined,
): boolean {
  if (!resumed) {
    checkpoint.spooled = consent?.plansFirst ?? false;
    return checkpoint.spooled;
  }
  if (!checkpoint.spooled && consent?.plansFirst) {
    throw new UsageError(
      `--state ${stateDir} holds an unfinished run started with --yes, which verifies addresses as leads arrive; without --yes it would pay without asking.`,
      `Run it again with --yes to finish it, or remove ${stateDir}/current to start over.`,
    );
  }
  return checkpoint.spooled;
}

/** The companies the run will do: the listing's count, or --max below it (the bar and its ETA are for those). */
function progressTotal(listed: number | undefined, max: number | undefined): number | undefined {
  return listed === undefined || max === undefined ? listed : Math.min(listed, max);
}

/** Why a pipeline that listed its set has no lead to write. */
function noLeadReason(counters: Counters, seniority: readonly string[] | undefined): string {
  if (counters.companies_seen === 0) {
    return counters.excluded.companies > 0
      ? `no lead to write: the ${countOf(counters.excluded.companies, 'company', 'companies')} that matched the filters ${counters.excluded.companies === 1 ? 'is' : 'are'} on --exclude-domains.`
      : 'no lead to write: no company matched all the filters.';
  }
  const companies = countOf(counters.companies_seen, 'company', 'companies');
  if (counters.domains_with_contacts === 0)
    return `no lead to write: the ${companies} that matched the filters have no named contact${atSeniority(seniority)}.`;
  return `no lead to write from the ${companies} that matched the filters${leftOutText(counters.contacts.droppedStale, counters.excluded.contacts)}.`;
}

/** A company's leads; a company without any is still one write, since a CSV's first write puts its header out. */
async function writeLeads(leads: LeadOutput, company: CompanyRow, rows: ContactRow[]): Promise<void> {
  await leads.write(rows.map((row) => ({ ...row, company })));
}
