import { z } from 'zod';
import { type CompaniesMeta, type CompanyRow, type ProspectClient } from '../../api/index.js';
import { EmptyResultError, ExitCode, knownFailure, UsageError } from '../../exit-codes.js';
import type { RowWriter } from '../../io/writers.js';
import type { RunContext } from '../../runtime/context.js';
import type { JobDeps } from '../../runtime/job-deps.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import { CHANGE_COLUMNS, CHANGE_TABLE_COLUMNS, COMPANY_COLUMNS, COMPANY_TABLE_COLUMNS } from './columns.js';
import {
  companyQueries,
  filtersRecord,
  localRowFilter,
  normalizeCountries,
  validateCompanyFilters,
  withCompanyFilters,
  type CompanyFilters,
} from './filters.js';
import { countRecord, countSet, listedCompanies, setMeta, stoppedAtMaxLine, type SetCount } from './set-count.js';
import { splitOptions } from './split.js';
import { checkLocalTechnologies, pageSizeForMax, walkCompanies, type CompanyWalk } from './walk.js';
import { COMPANIES_FLAGS } from '../../options/command-flags.js';
import { flagShape } from '../shared/flags.js';
import { planOutput } from '../shared/output-plan.js';
import { provenanceLine, runRecord } from '../shared/provenance.js';
import { Exclusions } from '../shared/exclusion.js';
import { checkRunFiles, rowFile, runRowJob } from '../shared/runner.js';
import type { Progress } from '../../ui/progress.js';
import { openSnapshots, type ListingSnapshots } from './snapshots.js';

/** `prospect companies`: its flags (the input) and the job's options (the output). */
const companiesOptionsSchema = withCompanyFilters(flagShape(COMPANIES_FLAGS));
export type CompaniesFlags = z.input<typeof companiesOptionsSchema>;
type CompaniesOptions = z.output<typeof companiesOptionsSchema>;

export async function runCompanies(ctx: RunContext, flags: CompaniesFlags, deps: JobDeps): Promise<number> {
  const startedAt = Date.now();
  const parsed = parseCompaniesFlags(flags);
  const { format, columns } = parsed.changes
    ? planOutput(ctx, parsed, CHANGE_COLUMNS, CHANGE_TABLE_COLUMNS)
    : planOutput(ctx, parsed, COMPANY_COLUMNS, COMPANY_TABLE_COLUMNS);
  await checkRunFiles(parsed);
  const options = { ...parsed, filters: await normalizeCountries(parsed.filters) };
  const exclusions = await Exclusions.load(ctx, options, { domains: true, emails: false });
  const snapshots = await openSnapshots(ctx, options, exclusions, format === 'json' || format === 'ndjson');
  const client = deps.client(await deps.connection());
  const listing = openListing(ctx, client, options, exclusions, snapshots);
  const record = () => companiesRecord(listing, exclusions, startedAt);

  return runRowJob<CompanyRow>(ctx, {
    startedAt,
    progress: 'Fetching companies',
    file: rowFile(options, format, columns),
    summary: { path: options.summary, record },
    async work(writer, progress) {
      await checkLocalTechnologies(client, options.filters);
      await writeCompanies(listing, writer, progress);
      if (listing.written === 0 && !snapshots?.anyChange())
        throw noMatch(options.filters, listing.fetched, exclusions.removed.domains);
      const { meta } = listing;
      return meta === undefined ? undefined : { ...meta, ...countFields(meta, listing.count()) };
    },
    // The snapshot replaces the last complete one only once the diff written from it is in place.
    committed: () => snapshots?.publishIfComplete(listing.complete, listing.meta),
    close: () => snapshots?.abandonUnpublished(),
    onFailure() {
      // Not awaited: a page asked for ahead may still be in flight; closing the client (cleanup) ends it.
      void listing.walk.chunks.return(undefined).catch(() => {});
    },
    // Only valid filters that match nobody (exit 3); a typo stays an error whatever --allow-empty says.
    emptyResult: (error) =>
      options.allowEmpty && knownFailure(error)?.exitCode === ExitCode.unanswerable
        ? { meta: listing.meta, sidecar: true }
        : undefined,
    written: () => ({ rows: listing.written, noun: ['company', 'companies'], path: options.output }),
    report(sidecar) {
      const provenance = provenanceLine(listing.meta, ctx.reporter.verbose);
      if (provenance) ctx.reporter.info(provenance);
      // Asked for: a summary line, not a warning a cron job mails every run (the record has stopped_at_max).
      if (listing.stoppedAtMax) ctx.reporter.info(stoppedAtMaxLine(options.max!, listing.count()));
      exclusions.report(ctx);
      if (sidecar) ctx.reporter.info(`Where the data came from: ${sidecar}.`);
      snapshots?.report();
    },
  });
}

/** The flags as the job reads them, every check that needs no file or call done. */
function parseCompaniesFlags(flags: CompaniesFlags): CompaniesOptions {
  const parsed = companiesOptionsSchema.parse(flags);
  validateCompanyFilters(parsed.filters);
  if (parsed.max !== undefined && (!Number.isInteger(parsed.max) || parsed.max < 1)) {
    throw new UsageError('--max must be a whole number of at least 1.');
  }
  if (parsed.changes && parsed.state === undefined)
    throw new UsageError('--changes compares with the snapshots kept in --state DIR (or pg:NAME): give one.');
  if (parsed.change !== undefined && !parsed.changes)
    throw new UsageError('--change keeps kinds of --changes: add it.');
  if (parsed.changes && parsed.max !== undefined)
    throw new UsageError(
      '--changes compares the whole listing with the last one; --max would cut it, and every company after ' +
        'the cut would look gone.',
      'Leave out --max; keep fewer kinds with --change new,changed.',
    );
  return parsed;
}

/** The set being listed and what the run has made of it so far. */
interface Listing {
  options: CompaniesOptions;
  walk: CompanyWalk;
  /** The filters the service cannot apply, and --exclude-domains: a row they refuse is not written. */
  keep: ((row: CompanyRow) => boolean) | undefined;
  meta: CompaniesMeta | undefined;
  written: number;
  fetched: number;
  stoppedAtMax: boolean;
  /** The walk reached the listing's end: its snapshot may replace the last complete one. */
  complete: boolean;
  snapshots: ListingSnapshots | undefined;
  count(): SetCount;
}

function openListing(
  ctx: RunContext,
  client: ProspectClient,
  options: CompaniesOptions,
  exclusions: Exclusions,
  snapshots: ListingSnapshots | undefined,
): Listing {
  const stackFilter = localRowFilter(options.filters);
  // An excluded company is not written and does not count towards --max.
  const keep = exclusions.active
    ? (row: CompanyRow) => (stackFilter?.(row) ?? true) && exclusions.keepsDomain(row.domain)
    : stackFilter;
  const pageSize = pageSizeForMax(options.max, keep !== undefined, ctx.global.pageSize);
  // A long listing is split into parts walked at once where that lists the same companies (companies/split.ts).
  const split = splitOptions(ctx.reporter, options.filters, options.concurrency, options.max);
  // The client asks for each next page as a body arrives; with --max it does not, so no call is made
  // for a page that is not written.
  const readAhead = options.max === undefined;
  const walk = walkCompanies(client, companyQueries(options.filters), { readAhead, pageSize, split });
  return {
    options,
    walk,
    keep,
    meta: undefined,
    written: 0,
    fetched: 0,
    stoppedAtMax: false,
    complete: false,
    snapshots,
    count: () => countSet(options.filters, walk.answers),
  };
}

/** The listing's pages, written as they come, to --max if there is one. */
async function writeCompanies(listing: Listing, writer: RowWriter<CompanyRow>, progress: Progress): Promise<void> {
  const { options, walk, keep, snapshots } = listing;
  const max = options.max;
  let reachedEnd = true;
  for await (const chunk of walk.chunks) {
    listing.meta = setMeta(options.filters, walk.answers);
    listing.fetched += chunk.rows.length;
    // The snapshot keeps the listing as the filters make it; --exclude-domains only leaves rows out of the file.
    let rows = snapshots ? await snapshots.page(chunk.rows) : keep ? chunk.rows.filter(keep) : chunk.rows;
    const reachesMax = max !== undefined && listing.written + rows.length >= max;
    if (reachesMax) {
      listing.stoppedAtMax = listing.written + rows.length > max || !chunk.last;
      rows = rows.slice(0, max - listing.written);
    }
    await writer.writeRows(rows);
    listing.written += rows.length;
    // --max ends the run at its count; without it, the service's count is the whole listing.
    const listed = listedCompanies(walk.answers);
    const total = max !== undefined ? Math.min(listed ?? max, max) : listed;
    progress.update({ done: max !== undefined ? listing.written : listing.fetched, total, noun: 'companies' });
    // Leaving the loop lets the listing go (nothing is in flight without read-ahead).
    if (reachesMax) {
      reachedEnd = !listing.stoppedAtMax;
      break;
    }
  }
  listing.complete = reachedEnd;
  if (snapshots && reachedEnd) {
    for await (const rows of snapshots.gone()) {
      await writer.writeRows(rows);
      listing.written += rows.length;
    }
  }
}

function companiesRecord(listing: Listing, exclusions: Exclusions, startedAt: number) {
  const { options } = listing;
  const record = runRecord({
    command: 'companies',
    parameters: { max: options.max ?? null, ...exclusions.parameters() },
    startedAt,
    output: options.output,
    rows: listing.written,
    filters: filtersRecord(options.filters),
    meta: listing.meta,
    setCount: countFields(listing.meta, listing.count()),
    stoppedAtMax: listing.stoppedAtMax,
    excluded: exclusions.record(),
  });
  return listing.snapshots ? { ...record, changes: listing.snapshots.record() } : record;
}

/** The service had companies for the first technology, but the filters it cannot express left none. */
function noMatch(filters: CompanyFilters, fetched: number, excluded: number): EmptyResultError {
  if (excluded > 0) {
    const companies = countOf(excluded, 'company', 'companies');
    return new EmptyResultError(
      `no company is left to write: the ${companies} that matched all the filters ` +
        `${excluded === 1 ? 'is' : 'are'} on --exclude-domains.`,
    );
  }
  const others = [
    locallyChecked(filters.technologies.slice(1), filters.notTechnologies.slice(1)),
    filters.industries.length > 0 ? `is in ${filters.industries.map((label) => `"${label}"`).join(' or ')}` : '',
    filters.maxRank !== undefined ? `has a crux_rank of at most ${formatCount(filters.maxRank)}` : '',
  ]
    .filter(Boolean)
    .join(' and ');
  const had = `${formatCount(fetched)} ${fetched === 1 ? 'company' : 'companies'}`;
  return new EmptyResultError(
    `no company matched all the filters: the service had ${had} for "${filters.technologies[0]}", ` +
      `none of which also ${others}.`,
  );
}

/** "runs Magento and WooCommerce and does not run Klaviyo": the filters checked here, as one phrase. */
function locallyChecked(runs: readonly string[], runsNot: readonly string[]): string {
  const and = (names: readonly string[]) =>
    names.length < 2 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  const or = (names: readonly string[]) =>
    names.length < 2 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
  return [runs.length > 0 ? `runs ${and(runs)}` : '', runsNot.length > 0 ? `does not run ${or(runsNot)}` : '']
    .filter(Boolean)
    .join(' and ');
}

/**
 * The document's and the sidecar's count fields: `total` and `contact_count` stay only where they
 * count the set asked for (in the service's place among the meta fields, so a one-query export keeps
 * the service's bytes); otherwise they are replaced by what the service did count.
 */
function countFields(meta: CompaniesMeta | undefined, count: SetCount): Record<string, unknown> {
  const { total, contact_count, ...fields } = countRecord(count);
  if (total === undefined) return { total: undefined, contact_count: undefined, ...fields };
  return {
    ...(meta?.total === undefined ? {} : { total }),
    ...(meta?.contact_count === undefined ? {} : { contact_count }),
  };
}
