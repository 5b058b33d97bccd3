import { copyFile, rename, rm } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { pipeline as pipeStreams } from 'node:stream/promises';
import { resolve } from 'node:path';
import { UnanswerableError, type CompaniesMeta, type CompanyRow } from '../api/index.js';
import { ExitCode, exitCodeOf, UsageError } from '../exit-codes.js';
import { tempPathFor } from '../io/atomic-file.js';
import { selectColumns } from '../io/columns.js';
import { checkOutputPath, openOutput, resolveFormat, type Output, type OutputFlags } from '../io/output.js';
import { createRowWriter, type RowWriter } from '../io/writers.js';
import { createApiClient } from '../runtime/api-client.js';
import { resolveConnection } from '../runtime/connection.js';
import type { RunContext } from '../runtime/context.js';
import { rateText, startProgress, formatCount } from '../ui/progress.js';
import { localStackFilter, serviceQuery, validateCompanyFilters, type CompanyFilters } from './company-filters.js';
import { parseContactFlags, type ContactFlags } from './contact-options.js';
import { contactRowsFor, countRows, newContactCounts, type ContactCounts } from './contact-processing.js';
import { LEAD_COLUMNS, LEAD_TABLE_COLUMNS, leadJson, type LeadRow } from './contact-rows.js';
import { fetchContactsInOrder } from './contacts-fanout.js';
import { leadKey } from './lead-key.js';
import { mapInOrder } from './ordered-pool.js';
import { fingerprint, newRunId, PipelineState, type AppendOnlyFile, type Checkpoint } from './pipeline-state.js';
import { finishSummary, writeSummary } from './run-summary.js';
import { cacheCutoff, openVerifier, type VerifyCacheFlags } from './verifier-setup.js';

export interface PipelineOptions extends ContactFlags, OutputFlags, VerifyCacheFlags {
  filters: CompanyFilters;
  state?: string;
  onlyNew: boolean;
  allowEmpty: boolean;
}

/** Counts that belong to committed output only, so they survive a resume exactly. */
interface Counters {
  companies_seen: number;
  domains_with_contacts: number;
  truncated_at_limit: string[];
  contacts: ContactCounts;
  verification: { from_cache: number; unchecked: number };
}

interface CompanyItem {
  company: CompanyRow;
  /** Set on a page's last kept row: once it is written, the run can resume from this cursor. */
  pageEnd?: { nextCursor: string | null };
}

export async function runPipeline(ctx: RunContext, options: PipelineOptions): Promise<number> {
  const startedAt = Date.now();
  const plan = validate(ctx, options);
  await checkOutputPath(options.output);
  await checkOutputPath(options.summary);

  const state = options.state !== undefined ? await PipelineState.open(options.state) : undefined;
  if (state) ctx.onCleanup(await state.lock('pipeline'));
  const previous = await state?.readCheckpoint();
  if (previous && previous.fingerprint !== plan.fingerprint) {
    throw new UsageError(
      `--state ${options.state} holds an unfinished run of a different command (other filters or options), so this one cannot resume from it.`,
      `Run the original command again to finish it, use another --state directory, or remove ${options.state}/current to start over.`,
    );
  }
  const now = previous ? new Date(previous.now) : new Date();
  const settings = parseContactFlags(options, now);
  const checkpoint: Checkpoint = previous ?? {
    version: 1,
    run_id: newRunId(),
    fingerprint: plan.fingerprint,
    command: 'pipeline',
    now: now.toISOString(),
    cursor: null,
    listing_done: false,
    meta: null,
    output_bytes: 0,
    keys_bytes: 0,
    rows_written: 0,
    pages_done: 0,
    counters: {},
  };
  const counters = restoreCounters(checkpoint);
  if (previous) ctx.reporter.info(`Resuming the unfinished run ${checkpoint.run_id} (${checkpoint.rows_written} rows already written).`);

  const summary = {
    command: 'pipeline',
    parameters: plan.parameters,
    run_id: checkpoint.run_id,
    resumed: Boolean(previous),
    started_at: new Date(startedAt).toISOString(),
    companies_seen: 0,
    contacts: newContactCounts(),
    domains: { with_contacts: 0, truncated_at_limit: [] as string[] },
    verification: { budget: settings.verifyBudget ?? null, units_spent: 0, units_left: null as number | null, from_cache: 0, unchecked: 0 },
    no_match_reason: null as string | null,
    output: options.output ?? null,
  };

  const connection = await resolveConnection(ctx);
  const client = createApiClient(ctx, connection);
  const verifier =
    settings.stale === 'verify'
      ? openVerifier(ctx, client, connection, {
          useCache: options.cache,
          cacheFreshSince: plan.cacheFreshSince,
          budget: settings.verifyBudget,
          concurrency: settings.concurrency,
          ...(state ? { stateDir: state.dir, runId: checkpoint.run_id, countedBefore: counters.verification } : {}),
        })
      : undefined;
  if (verifier) ctx.onCleanup(() => verifier.close());
  const exported = options.onlyNew && state ? await state.exportedKeys() : undefined;

  const stateFiles = state ? { output: await state.openOutput(checkpoint.output_bytes), keys: await state.openKeys(checkpoint.keys_bytes) } : undefined;
  if (stateFiles) ctx.onCleanup(async () => {
    await stateFiles.output.close().catch(() => {});
    await stateFiles.keys.close().catch(() => {});
  });
  const plainOutput: Output | undefined = stateFiles ? undefined : await openOutput(options.output, ctx.stdout);
  const writer: RowWriter<LeadRow> = await createRowWriter<LeadRow>(plan.format, stateFiles?.output ?? plainOutput!.sink, {
    columns: plan.columns,
    toJson: leadJson,
    escapeFormulas: options.escapeFormulas,
    ...(previous ? { resume: { rowsWritten: checkpoint.rows_written, started: checkpoint.output_bytes > 0 } } : {}),
  });

  const progress = await startProgress(ctx.reporter, ctx.stderr, 'Building the lead list…');
  let meta: CompaniesMeta | undefined;
  const keep = localStackFilter(options.filters);
  async function* companyItems(): AsyncGenerator<CompanyItem> {
    if (checkpoint.listing_done) return;
    const pages = client.companies(serviceQuery(options.filters), checkpoint.cursor ? { startCursor: checkpoint.cursor } : {});
    for await (const page of pages) {
      meta ??= page.meta;
      checkpoint.meta ??= { source: page.meta.source, scope: page.meta.scope };
      const rows = keep ? page.data.filter(keep) : page.data;
      for (const [index, company] of rows.entries()) {
        yield index === rows.length - 1 ? { company, pageEnd: { nextCursor: page.nextCursor } } : { company };
      }
    }
  }

  const finishSummaryWith = (exitCode: number, error?: unknown) => {
    Object.assign(summary, { companies_seen: counters.companies_seen, contacts: counters.contacts });
    summary.domains = { with_contacts: counters.domains_with_contacts, truncated_at_limit: counters.truncated_at_limit };
    if (verifier) {
      const spent = verifier.run.unitsSpent;
      Object.assign(summary.verification, { units_spent: spent, units_left: settings.verifyBudget !== undefined ? settings.verifyBudget - spent : null, from_cache: verifier.run.fromCache, unchecked: verifier.run.unchecked });
    }
    return finishSummary(summary, startedAt, exitCode, error);
  };

  try {
    const isNew = exported ? (row: Parameters<typeof leadKey>[0]) => !exported.has(leadKey(row)) : undefined;
    const answered = fetchContactsInOrder(client, companyItems(), (item) => item.company.domain.toLowerCase(), settings);
    const leads = mapInOrder(answered, settings.concurrency * 2, async (found) => ({
      found,
      result: await contactRowsFor(found.contacts, found.source, settings, now, verifier, isNew),
    }));
    for await (const { found, result } of leads) {
      const rows: LeadRow[] = result.rows.map((row) => ({ ...row, company: found.item.company }));
      await writer.writeRows(rows);
      if (stateFiles && rows.length > 0) await stateFiles.keys.write(rows.map((row) => `${leadKey(row)}\n`).join(''));
      counters.companies_seen += 1;
      if (found.contacts.length > 0) counters.domains_with_contacts += 1;
      if (found.truncated) counters.truncated_at_limit.push(found.domain);
      countRows(counters.contacts, result);
      checkpoint.rows_written += rows.length;
      if (state && stateFiles && found.item.pageEnd) {
        checkpoint.cursor = found.item.pageEnd.nextCursor;
        checkpoint.listing_done = found.item.pageEnd.nextCursor === null;
        checkpoint.pages_done += 1;
        checkpoint.output_bytes = stateFiles.output.bytes;
        checkpoint.keys_bytes = stateFiles.keys.bytes;
        checkpoint.counters = { ...counters, verification: verifier ? { from_cache: verifier.run.fromCache, unchecked: verifier.run.unchecked } : counters.verification };
        await state.commit(checkpoint, [stateFiles.output, stateFiles.keys]);
      }
      progress.update(`Building the lead list… ${formatCount(counters.companies_seen)} companies · ${rateText(counters.contacts.written, 'leads', startedAt)}`);
    }
    await writer.finish(checkpoint.meta ?? { source: meta?.source, scope: meta?.scope });
  } catch (error) {
    progress.stop();
    if (error instanceof UnanswerableError && counters.companies_seen === 0) {
      summary.no_match_reason = error.message;
      if (options.allowEmpty) {
        await writer.finish();
        await publish(ctx, options, state, stateFiles?.output, plainOutput);
        await state?.recordSuccess(checkpoint, { finished_at: new Date().toISOString(), rows: 0, no_match_reason: error.message });
        await writeSummary(options.summary, finishSummaryWith(ExitCode.ok));
        ctx.reporter.error(`${error.message} Wrote an empty result (--allow-empty).`);
        return ExitCode.ok;
      }
      await state?.discardCurrent();
    }
    await plainOutput?.abort();
    await writeSummary(options.summary, finishSummaryWith(exitCodeOf(error, ctx.signal), error));
    if (state && !(error instanceof UnanswerableError)) {
      // A cleanup runs after the error line is printed, so the hint reads as the last word.
      ctx.onCleanup(() => {
        ctx.stderr.write(`prospect: the checkpoint in ${state.dir} keeps ${checkpoint.rows_written} committed rows; run the same command again to resume.\n`);
      });
    }
    throw error;
  }
  progress.stop();
  await publish(ctx, options, state, stateFiles?.output, plainOutput);
  await state?.recordSuccess(checkpoint, { finished_at: new Date().toISOString(), rows: checkpoint.rows_written, output: options.output ?? null, only_new: options.onlyNew });
  await writeSummary(options.summary, finishSummaryWith(ExitCode.ok));
  reportPipeline(ctx, counters, verifier?.run.unitsSpent, options);
  return ExitCode.ok;
}

function validate(ctx: RunContext, options: PipelineOptions) {
  validateCompanyFilters(options.filters);
  const settings = parseContactFlags(options, new Date());
  if (options.onlyNew && options.state === undefined) {
    throw new UsageError('--only-new needs --state DIR: that is where earlier exports are remembered.');
  }
  const cacheFreshSince = cacheCutoff(options.cacheTtl, new Date());
  const format = resolveFormat({ format: options.format, outputPath: options.output, stdoutIsTTY: Boolean(ctx.stdout.isTTY) });
  const columns = selectColumns(LEAD_COLUMNS, options.columns ?? (format === 'table' ? LEAD_TABLE_COLUMNS.join(',') : undefined));
  const parameters = {
    filters: options.filters,
    seniority: settings.seniority ?? null,
    limit: settings.limit,
    per_company: settings.perCompany ?? null,
    max_age: settings.maxAgeText,
    stale: settings.stale,
    verify_budget: settings.verifyBudget ?? null,
    only_new: options.onlyNew,
    format,
    columns: columns.map((column) => column.name),
    escape_formulas: options.escapeFormulas,
  };
  return { format, columns, parameters, fingerprint: fingerprint(parameters), cacheFreshSince };
}

function restoreCounters(checkpoint: Checkpoint): Counters {
  const saved = checkpoint.counters as Partial<Counters>;
  return {
    companies_seen: saved.companies_seen ?? 0,
    domains_with_contacts: saved.domains_with_contacts ?? 0,
    truncated_at_limit: saved.truncated_at_limit ?? [],
    contacts: { ...newContactCounts(), ...saved.contacts },
    verification: { from_cache: 0, unchecked: 0, ...saved.verification },
  };
}

/** The finished rows become visible all at once: renamed over -o, or copied to stdout. */
async function publish(ctx: RunContext, options: PipelineOptions, state: PipelineState | undefined, partial: AppendOnlyFile | undefined, plainOutput: Output | undefined): Promise<void> {
  if (!state || !partial) {
    await plainOutput!.commit();
    return;
  }
  await partial.sync();
  if (options.output === undefined) {
    await pipeStreams(createReadStream(state.outputPath), ctx.stdout, { end: false });
    return;
  }
  const target = resolve(options.output);
  try {
    await rename(state.outputPath, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    // The state and the output are on different file systems: copy beside the target, then rename.
    const temp = tempPathFor(target);
    await copyFile(state.outputPath, temp);
    await rename(temp, target).catch(async (renameError) => {
      await rm(temp, { force: true });
      throw renameError;
    });
  }
}

function reportPipeline(ctx: RunContext, counters: Counters, unitsSpent: number | undefined, options: PipelineOptions): void {
  const { contacts } = counters;
  ctx.reporter.info(
    `${formatCount(contacts.written)} leads from ${formatCount(counters.companies_seen)} companies · fresh ${contacts.fresh}, stale ${contacts.stale}, unknown ${contacts.unknown}, no email ${contacts.none}` +
      (unitsSpent !== undefined ? ` · ${unitsSpent} units spent` : '') +
      (options.onlyNew ? ` · ${contacts.alreadyExported} already exported before` : ''),
  );
  if (options.onlyNew && contacts.written === 0) ctx.stderr.write('prospect: no new leads since the last run; wrote a header-only result.\n');
  if (counters.truncated_at_limit.length > 0) {
    ctx.reporter.warn(`${counters.truncated_at_limit.length} domain(s) alone fill the --limit and may have more contacts: ${counters.truncated_at_limit.slice(0, 10).join(', ')}.`);
  }
}
