import type { ExportedBefore } from '../state-store/types.js';
import { UnanswerableError, type CompanyRow, type ProspectClient } from '../../api/index.js';
import { EmptyResultError, ExitCode, knownFailure, UsageError } from '../../exit-codes.js';
import { writeFileAtomic } from '../../io/atomic-file.js';
import type { RunContext } from '../../runtime/context.js';
import type { JobDeps } from '../../runtime/job-deps.js';
import { countOf } from '../../ui/format-count.js';
import { filtersRecord, locallyApplied, normalizeCountries, validateCompanyFilters } from '../companies/filters.js';
import { parseContactFlags, type ContactSettings } from '../contacts/options.js';
import { contactRowsFor, uncountRow } from '../contacts/domain-rows.js';
import { reportRowFilters, totalUndeliverable, undeliverableKind } from '../contacts/row-filters.js';
import type { ContactRow } from '../contacts/rows.js';
import { callsText, fetchContactsInOrder, newFanoutStats, type FanoutStats } from '../contacts/fanout.js';
import { atSeniority, leftOutText } from '../shared/caveats.js';
import { emptyContactRow, reportKeptEmpty } from '../contacts/keep-empty.js';
import { documentMeta, metaJson, runRecord, type RunRecord } from '../shared/provenance.js';
import { Exclusions } from '../shared/exclusion.js';
import { loadSuppression } from '../suppression/suppression.js';
import { stoppedAtMaxLine, type SetCount } from '../companies/set-count.js';
import { mapInOrder } from '../../util/ordered-pool.js';
import { commitCheckpoint, countCompany, passPage, type Checkpoint, type Counters } from './state/checkpoint.js';
import { companiesStillToDo, type CompanyItem } from './listing.js';
import { markPublishing, recordSuccess } from './state/exports-ledger.js';
import { LeadOutput } from './lead-output.js';
import type { LeadRow } from './lead-rows.js';
import { reportPipeline, verificationRecord } from './outcome.js';
import { pipelineOptionsSchema, type PipelineFlags, type PipelineOptions } from './options.js';
import { planPipeline, type PipelinePlan } from './plan.js';
import { checkNativeSqlite } from '../state-store/native-sqlite.js';
import { hostName } from '../state-store/index.js';
import { openRunState, refuseToReplaceExports, type RunState } from './run-state.js';
import { SpendConsent } from '../verification/consent.js';
import { openVerifier, verificationCounts, type OpenedVerifier } from '../verification/open-verifier.js';
import { planSpend, verifiedInOrder } from '../verification/spend-plan.js';
import { verificationEnding } from '../verification/refusal.js';
import { splitOptions } from '../companies/split.js';
import { checkRunFiles, runJob } from '../shared/runner.js';
import type { Progress } from '../../ui/progress.js';
import { openPipelineChanges, type PipelineChanges } from './changes.js';

export { pipelineOptionsSchema, type PipelineFlags };

/**
 * companies → contacts → freshness → verification as one export: company pages feed the contacts
 * fan-out while they arrive; with --state each finished page is checkpointed, so a run that dies
 * resumes where it stopped and never pays for a verification twice.
 */
export async function runPipeline(ctx: RunContext, flags: PipelineFlags, deps: JobDeps): Promise<number> {
  // A broken install (better-sqlite3 without its binary) is told before anything else happens.
  if (flags.state !== undefined && !flags.state.startsWith('pg:')) await checkNativeSqlite();
  if (flags.dryRun) return (await import('./dry-run.js')).runPipelineDryRun(ctx, flags, deps);
  const startedAt = Date.now();
  const parsed = pipelineOptionsSchema.parse(flags);
  validateCompanyFilters(parsed.filters);
  const options = { ...parsed, filters: await normalizeCountries(parsed.filters) };
  const consent =
    options.stale === 'verify'
      ? await SpendConsent.decide(ctx, { yes: options.yes, budget: options.verifyBudget })
      : undefined;
  const exclusions = await Exclusions.load(ctx, options, { domains: true, emails: true }, await loadSuppression(ctx));
  const plan = planPipeline(ctx, options, consent?.budget, exclusions.parameters());
  consent?.assertMayPay('pipeline --stale verify');
  await checkRunFiles(options);
  const run = await openPipelineRun(ctx, { options, consent, exclusions, plan }, deps);
  const record = () => pipelineRecord(run, startedAt);

  return runJob(ctx, {
    startedAt,
    progress: 'Building the lead list',
    output: run.leads,
    summary: { path: options.summary, record },
    async work(progress) {
      await writeLeadList(ctx, run, progress);
      const { checkpoint, counters, verifier } = run;
      // --only-new with every lead exported before is a week with nothing new, not a set that matches nobody;
      // so is --changes with no company new or changed.
      const nothingChanged = plan.changeKinds !== undefined && counters.companies_seen === 0 && run.changes!.listed > 0;
      if (checkpoint.rows_written === 0 && counters.contacts.alreadyExported === 0 && !nothingChanged)
        throw new EmptyResultError(noLeadReason(counters, run.settings.seniority));
      // Nothing new: the run says whose exports left it nothing (issue 43), another job's above all.
      if (checkpoint.rows_written === 0) run.exportedBefore = await run.exportsLedger?.exportedBefore?.();
      if (run.spooled && verifier && consent)
        await planSpend(run.leads.spool!.rows(), verifier, consent, (during) => progress.suspend(during));
      // No page at all (nothing listed) leaves no provenance to end the document with.
      await run.leads.finish(endOfDocument(run, record), verifier && verifyAsWritten(run, verifier, progress));
      await publish(ctx, run, record, {
        rows: checkpoint.rows_written,
        output: options.output ?? null,
        only_new: options.onlyNew,
      });
      run.recorded = true;
      await run.changes?.publish(checkpoint.meta?.source, !counters.stopped_at_max);
    },
    onFailure: (error) => keepOrDropCheckpoint(ctx, run, error),
    async writeEmptyResult(error) {
      if (!(matchedNobody(run, error) && options.allowEmpty)) return false;
      // A listing that ran has its provenance to end the document with; a refused one has none.
      await run.leads.finish(error instanceof EmptyResultError ? endOfDocument(run, record) : undefined);
      await publish(ctx, run, record, { rows: 0, no_match_reason: error.message });
      // A listing walked whole that left no lead is still this state's last complete listing.
      if (error instanceof EmptyResultError)
        await run.changes?.publish(run.checkpoint.meta?.source, !run.counters.stopped_at_max);
      else await run.changes?.abandon();
      return true;
    },
    endsWith: () => verificationEnding(run.verifier),
    written: () => ({ rows: run.checkpoint.rows_written, noun: ['lead', 'leads'], path: options.output }),
    report: () => reportPipelineRun(ctx, run),
  });
}

/** What the checks made of the flags, before the state is touched or a call made. */
interface PreparedRun {
  options: PipelineOptions;
  consent: SpendConsent | undefined;
  exclusions: Exclusions;
  plan: PipelinePlan;
}

/** One run of the pipeline: its state, its clients and output, and what it has done so far. */
interface PipelineRun extends PreparedRun, RunState {
  now: Date;
  settings: ContactSettings;
  counters: Counters;
  client: ProspectClient;
  verifier: OpenedVerifier | undefined;
  /** With --only-new and nothing new: who had exported the leads this run left out. */
  exportedBefore?: ExportedBefore[] | undefined;
  spooled: boolean;
  leads: LeadOutput;
  /** This run's contacts calls (a resumed run counts its own, not the earlier runs'). */
  fanout: FanoutStats;
  /** Why the run wrote nothing, when it did: the record's no_match_reason. */
  noMatchReason: string | null;
  /** The rows the checkpoint on disk covers: what a resume starts from (the in-memory count runs ahead of it). */
  committedRows: number;
  /** The leads are written and the run recorded: its checkpoint is gone, there is nothing to resume. */
  recorded: boolean;
  /** Where --max stopped the listing this run: what the service counted of the set, for the caveat. */
  stoppedAt: SetCount | undefined;
  /** --state: the listing kept as a snapshot; with --changes, compared with the last complete one. */
  changes: PipelineChanges | undefined;
  /** The licensed contact dataset the service named (the rows' `source`), for the run's record. */
  contactsSource?: unknown;
}

/** The state locked and read, the clients and the output open: everything the run works with. */
async function openPipelineRun(ctx: RunContext, prepared: PreparedRun, deps: JobDeps): Promise<PipelineRun> {
  const { options, consent, plan } = prepared;
  const runState = await openRunState(ctx, options.state, plan.fingerprint, plan.formerFingerprints);
  const { state, exportsLedger, checkpoint, resumed } = runState;
  if (options.onlyNew && exportsLedger) await refuseToReplaceExports(exportsLedger, options.output, options.state!);
  const now = new Date(checkpoint.now);
  const settings = parseContactFlags(options, now);
  const counters = checkpoint.counters;
  const connection = await deps.connection();
  const client = deps.client(connection);
  const verifier = consent
    ? await openVerifier(ctx, deps.paidClient(connection), connection, {
        useCache: options.cache,
        cacheFreshSince: plan.cacheFreshSince,
        budget: consent.budget,
        concurrency: settings.concurrency,
        stateDir: state?.dir,
        remoteState: state?.remote !== undefined,
        runId: state ? checkpoint.run_id : undefined,
        countedBefore: state ? counters.verification : undefined,
      })
    : undefined;
  if (verifier) ctx.onCleanup(() => verifier.close());
  const spooled = spoolsLeads(checkpoint, resumed, consent, options.state);
  // A paying run's id is on disk before its first paid call, so a run stopped before its first page
  // resumes as the same run: its Idempotency-Keys and its paid results (even with --no-cache) are found again.
  if (verifier && state && !resumed) await commitCheckpoint(state, checkpoint, []);
  const { format, columns } = plan;
  const { escapeFormulas, bom, output } = options;
  const leadOptions = {
    format,
    columns,
    escapeFormulas,
    bom,
    output,
    spooled,
    changes: plan.changeKinds !== undefined,
  };
  const leads = await LeadOutput.open(ctx, leadOptions, state, checkpoint, resumed);
  // With --state the listing is kept as a snapshot of its filters, which a later --changes compares with.
  const changes =
    options.state === undefined ? undefined : await openPipelineChanges(ctx, options, checkpoint, plan.changeKinds);
  return {
    ...prepared,
    ...runState,
    now,
    settings,
    counters,
    client,
    verifier,
    spooled,
    leads,
    fanout: newFanoutStats(),
    noMatchReason: null,
    committedRows: checkpoint.rows_written,
    recorded: false,
    stoppedAt: undefined,
    changes,
  };
}

/** The listing's companies, their contacts asked for as pages arrive, each company's leads written in order. */
async function writeLeadList(ctx: RunContext, run: PipelineRun, progress: Progress): Promise<void> {
  const { options, checkpoint, counters, verifier, leads } = run;
  for await (const { found, result, empty, excludedContacts, suppressedContacts } of leadsByCompany(ctx, run)) {
    await writeLeads(leads, found.item.company, [...result.rows, ...empty]);
    countCompany(checkpoint, found, result);
    checkpoint.rows_written += empty.length;
    counters.kept_empty += empty.length;
    counters.excluded.companies += found.item.excluded ?? 0;
    counters.filtered_locally += found.item.filtered ?? 0;
    counters.excluded.contacts += excludedContacts;
    counters.excluded.suppressed += suppressedContacts;
    if (found.item.stoppedAtMax) {
      counters.stopped_at_max = true;
      run.stoppedAt = found.item.stoppedAtMax;
    }
    const pageEnd = found.item.pageEnd;
    if (pageEnd && leads.keepsCheckpoints) {
      const verified = verifier ? verificationCounts(verifier.run) : counters.verification;
      passPage(checkpoint, pageEnd, verified);
      await leads.commitPage(checkpoint);
      run.committedRows = checkpoint.rows_written;
    }
    const units = verifier ? ` · ${countOf(verifier.run.unitsSpent, 'unit')} spent` : '';
    progress.update({
      done: counters.companies_seen,
      total: progressTotal(found.item.listingTotal, options.max),
      noun: 'companies',
      detail: `${countOf(counters.contacts.written, 'lead')}${units}`,
    });
  }
}

/** Each listed company with its rows, in listing order, while the next companies' contacts are asked for. */
function leadsByCompany(ctx: RunContext, run: PipelineRun) {
  const { options, exclusions, settings, checkpoint, counters, exportsLedger } = run;
  const keepNew = options.onlyNew && exportsLedger ? (rows: ContactRow[]) => exportsLedger.newOnly(rows) : undefined;
  // Where a company is accepted: an excluded domain is never sent to /contacts, and --max counts only the others.
  const accept = exclusions.active ? (company: CompanyRow) => exclusions.keepsDomain(company.domain) : undefined;
  const max = options.max === undefined ? undefined : options.max - counters.companies_seen;
  // The listing gets a quarter of --concurrency: a page of companies feeds about ten contacts calls,
  // so the contacts set the pace, and parts reading ahead at the default 4 would only wait in memory.
  const split = splitOptions(ctx.reporter, options.filters, Math.floor(settings.concurrency / 4));
  const excludedAfterLast = (excluded: number) => (counters.excluded.companies += excluded);
  const filteredAfterLast = (filtered: number) => (counters.filtered_locally += filtered);
  const limits = {
    accept,
    max,
    split,
    excludedAfterLast,
    filteredAfterLast,
    pageSize: ctx.global.pageSize,
    changes: run.changes,
  };
  const companies = companiesStillToDo(run.client, options.filters, checkpoint, limits);
  const domainOf = (item: CompanyItem) => item.company.domain.toLowerCase();
  const answered = fetchContactsInOrder(run.client, companies, domainOf, settings, run.fanout);
  return mapInOrder(answered, settings.concurrency * 2, async (found) => {
    // Where a contact is accepted: an excluded or suppressed address is never verified, paid for or written.
    run.contactsSource ??= found.source;
    const suppressedBefore = exclusions.removed.suppressed;
    const contacts = exclusions.keepContacts(found.contacts);
    const suppressedContacts = exclusions.removed.suppressed - suppressedBefore;
    const verifier = run.spooled ? undefined : run.verifier;
    const result = await contactRowsFor(contacts, found.source, settings, run.now, verifier, keepNew);
    const keptEmpty = options.keepEmpty && contacts.length === 0;
    const empty = keptEmpty ? [emptyContactRow(found.domain, settings, run.now)] : [];
    const excludedContacts = found.contacts.length - contacts.length - suppressedContacts;
    return { found, result, empty, excludedContacts, suppressedContacts };
  });
}

/** A spooled run's leads, verified in order as they are written, with their own progress. */
function verifyAsWritten(run: PipelineRun, verifier: OpenedVerifier, progress: Progress) {
  const total = run.checkpoint.rows_written;
  return (rows: AsyncIterable<LeadRow>) => {
    const verified = verifiedInOrder(rows, verifier, run.settings.concurrency * 4, (done) =>
      progress.update({
        done,
        total,
        noun: 'leads verified and written',
        detail: `${countOf(verifier.run.unitsSpent, 'unit')} spent`,
      }),
    );
    return run.settings.deliverableOnly ? deliverableAfterVerification(run, verified) : verified;
  };
}

/** --deliverable-only in a spooled run: the verdicts are known only now, so the rows are counted again here. */
async function* deliverableAfterVerification(run: PipelineRun, rows: AsyncIterable<LeadRow>): AsyncGenerator<LeadRow> {
  for await (const row of rows) {
    const kind = undeliverableKind(row, run.settings.keepClasses);
    if (kind === null) {
      yield row;
      continue;
    }
    uncountRow(run.counters.contacts, row, kind);
    run.checkpoint.rows_written -= 1;
  }
}

function endOfDocument(run: PipelineRun, record: () => RunRecord): unknown {
  return documentMeta(run.plan.format, run.checkpoint.meta ?? { source: undefined, scope: undefined }, record);
}

/** The output moved into place, with its sidecar; with --state, the run recorded as exported. */
async function publish(
  ctx: RunContext,
  run: PipelineRun,
  record: () => RunRecord,
  outcome: { rows: number; output?: string | null; only_new?: boolean; no_match_reason?: string },
): Promise<void> {
  const { state, exportsLedger, leads } = run;
  // Kept in the state before the output moves: a run that dies in between is recorded by the next one.
  const success = state
    ? await markPublishing(state, {
        run_id: run.checkpoint.run_id,
        finished_at: new Date().toISOString(),
        ...outcome,
        output_path: leads.filePath ?? null,
        // What `prospect provenance` tells of the run: its job, machine and licensed dataset.
        job: state.label,
        host: hostName(ctx.env),
        source: run.contactsSource ?? run.checkpoint.meta?.source,
      })
    : undefined;
  const sidecar = leads.sidecarPath('.meta.json');
  await leads.publish(sidecar);
  if (sidecar !== undefined) await writeFileAtomic(sidecar, metaJson(record()));
  if (state && exportsLedger && success) await recordSuccess(state, exportsLedger, success);
}

/** The service would not answer before any company was written: there is nothing to resume. */
function noCompanyMatched(run: PipelineRun, error: unknown): error is UnanswerableError {
  return error instanceof UnanswerableError && run.counters.companies_seen === 0;
}

/**
 * Valid filters that match nobody, or a listing that left no lead to write (exit 3): the one failure
 * --allow-empty makes an empty success; never a typo (exit 2).
 */
function matchedNobody(run: PipelineRun, error: unknown): error is Error {
  return (
    error instanceof EmptyResultError ||
    (noCompanyMatched(run, error) && knownFailure(error)?.exitCode === ExitCode.unanswerable)
  );
}

/** A failed run keeps its checkpoint to resume from, unless there is nothing to resume. */
async function keepOrDropCheckpoint(ctx: RunContext, run: PipelineRun, error: unknown): Promise<void> {
  const { state } = run;
  // A paid call already sent is let finish and kept in the state: the resume must not pay for it again.
  await run.verifier?.settle();
  if (matchedNobody(run, error)) {
    run.noMatchReason = error.message;
    if (!run.options.allowEmpty) await discardRun(run);
  } else if (noCompanyMatched(run, error)) {
    await discardRun(run);
  } else if (state && run.recorded) {
    // Only the listing's snapshot failed, after the leads were in place: a re-run would export again.
    ctx.onCleanup(() => {
      ctx.reporter.notice(
        `the leads are written and the run is recorded in ${state.label}; only its listing was not kept, ` +
          'so the next --changes compares with the last complete one.',
      );
    });
  } else if (state && !(error instanceof UnanswerableError)) {
    // A cleanup runs after the error line is printed, so the hint reads as the last word.
    const kept = countOf(run.committedRows, 'committed row');
    ctx.onCleanup(() => {
      ctx.reporter.notice(`the checkpoint in ${state.label} keeps ${kept}; run the same command again to resume.`);
    });
  }
}

/** Nothing to resume: the checkpoint goes, and so does the pending snapshot no resume will finish. */
async function discardRun(run: PipelineRun): Promise<void> {
  await run.state?.discardCurrent();
  await run.changes?.abandon();
}

function pipelineRecord(run: PipelineRun, startedAt: number): RunRecord {
  const { options, plan, checkpoint, counters, resumed } = run;
  const { companies, contacts, suppressed } = counters.excluded;
  const record = runRecord({
    command: 'pipeline',
    parameters: plan.parameters,
    startedAt,
    output: options.output,
    rows: checkpoint.rows_written,
    filters: filtersRecord(options.filters),
    meta: checkpoint.meta,
    stoppedAtMax: counters.stopped_at_max,
    excluded: run.exclusions.record({ domains: companies, emails: contacts, suppressed }),
    keptEmpty: options.keepEmpty ? counters.kept_empty : undefined,
    filteredLocally: filteredRecord(run),
    details: {
      run_id: checkpoint.run_id,
      resumed,
      companies_seen: counters.companies_seen,
      contacts: counters.contacts,
      domains: { with_contacts: counters.domains_with_contacts, truncated_at_limit: counters.truncated_at_limit },
      verification: verificationRecord(run.verifier?.run, run.consent?.budget),
      calls: run.fanout.calls,
      rows_received: run.fanout.rows,
      no_match_reason: run.noMatchReason,
    },
  });
  return run.changes ? Object.assign(record, { changes: run.changes.record() }) : record;
}

/** What the filters applied here removed, in the record only when there are such filters. */
function filteredRecord(run: PipelineRun): { companies: number; filters: string[] } | undefined {
  const filters = locallyApplied(run.options.filters);
  return filters.length === 0 ? undefined : { companies: run.counters.filtered_locally, filters };
}

function reportPipelineRun(ctx: RunContext, run: PipelineRun): void {
  const { options, counters } = run;
  const local = locallyApplied(options.filters);
  if (local.length > 0)
    ctx.reporter.info(
      `Left out ${countOf(counters.filtered_locally, 'company', 'companies')} before any contacts call: ` +
        `${local.join(', ')} applied locally.`,
    );
  reportPipeline(ctx, counters, run.verifier?.snapshot(), options.onlyNew, {
    job: options.state,
    by: run.exportedBefore,
  });
  run.changes?.report();
  ctx.reporter.info(`Contacts: ${callsText(run.fanout)}${run.resumed ? ' this run' : ''}.`);
  reportKeptEmpty(ctx.reporter, counters.kept_empty);
  reportRowFilters(ctx.reporter, run.settings, counters.contacts);
  if (counters.stopped_at_max && options.max !== undefined)
    // Asked for: a summary line, not a warning a cron job mails every week (the record has stopped_at_max).
    ctx.reporter.info(stoppedAtMaxLine(options.max, run.stoppedAt ?? { exact: false, wider: undefined }));
  run.exclusions.report(
    ctx,
    { domains: ['company', 'companies'], emails: ['contact', 'contacts'] },
    {
      domains: counters.excluded.companies,
      emails: counters.excluded.contacts,
      suppressed: counters.excluded.suppressed,
    },
  );
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
      `--state ${stateDir} holds an unfinished run started with --yes, which verifies addresses as leads ` +
        'arrive; without --yes it would pay without asking.',
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
    const excluded = counters.excluded.companies;
    if (excluded === 0) return 'no lead to write: no company matched all the filters.';
    const companies = countOf(excluded, 'company', 'companies');
    const are = excluded === 1 ? 'is' : 'are';
    return `no lead to write: the ${companies} that matched the filters ${are} on --exclude-domains.`;
  }
  const companies = countOf(counters.companies_seen, 'company', 'companies');
  const at = atSeniority(seniority);
  if (counters.domains_with_contacts === 0)
    return `no lead to write: the ${companies} that matched the filters have no named contact${at}.`;
  const { filteredOut, undeliverable } = counters.contacts;
  const filters = { filteredOut, undeliverable: totalUndeliverable(undeliverable) };
  const leftOut = leftOutText(counters.contacts.droppedStale, counters.excluded.contacts, filters);
  return `no lead to write from the ${companies} that matched the filters${leftOut}.`;
}

/** A company's leads; a company without any is still one write, since a CSV's first write puts its header out. */
async function writeLeads(leads: LeadOutput, company: CompanyRow, rows: ContactRow[]): Promise<void> {
  await leads.write(rows.map((row) => ({ ...row, company })));
}
