import { z } from 'zod';
import { CLIENT_DEFAULTS, type CompaniesMeta, type CompanyRow } from '../../api/index.js';
import { EmptyResultError, ExitCode, knownFailure, UsageError } from '../../exit-codes.js';
import { checkOutputPath, openOutput } from '../../io/output.js';
import { createRowWriter } from '../../io/writers.js';
import { createApiClient } from '../../runtime/api-client.js';
import { resolveConnection } from '../../runtime/connection.js';
import type { RunContext } from '../../runtime/context.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import { COMPANY_COLUMNS, COMPANY_TABLE_COLUMNS } from './columns.js';
import {
  companyQueries,
  describeFilters,
  filtersRecord,
  localStackFilter,
  normalizeCountries,
  validateCompanyFilters,
  withCompanyFilters,
  type CompanyFilters,
} from './filters.js';
import { stoppedAtMaxLine } from '../shared/caveats.js';
import { countRecord, countSet, listedCompanies, setMeta, type SetCount } from './set-count.js';
import { splitOptions } from './split.js';
import { checkLocalTechnologies, walkCompanies } from './walk.js';
import type { MergedChunk } from './merge.js';
import { outputOptions, summaryOption, suppressionOptions } from '../shared/flags.js';
import { planOutput } from '../shared/output-plan.js';
import { documentMeta, metaJson, provenanceLine, runRecord } from '../shared/provenance.js';
import { Suppression } from '../shared/suppression.js';
import { runJob } from '../shared/runner.js';

/** `prospect companies`: its flags (the input) and the job's options (the output). */
export const companiesOptionsSchema = withCompanyFilters({
  ...outputOptions,
  ...summaryOption,
  ...suppressionOptions,
  max: z.number().int().optional(),
  allowEmpty: z.boolean().default(false),
  concurrency: z.number().int().default(1),
});
export type CompaniesFlags = z.input<typeof companiesOptionsSchema>;
export type CompaniesOptions = z.output<typeof companiesOptionsSchema>;

export async function runCompanies(ctx: RunContext, flags: CompaniesFlags): Promise<number> {
  const startedAt = Date.now();
  const parsed = companiesOptionsSchema.parse(flags);
  validateCompanyFilters(parsed.filters);
  if (parsed.max !== undefined && (!Number.isInteger(parsed.max) || parsed.max < 1)) {
    throw new UsageError('--max must be a whole number of at least 1.');
  }
  const { format, columns } = planOutput(ctx, parsed, COMPANY_COLUMNS, COMPANY_TABLE_COLUMNS);
  await checkOutputPath(parsed.output, { sidecar: '.meta.json' });
  await checkOutputPath(parsed.summary);
  const options = { ...parsed, filters: await normalizeCountries(parsed.filters) };
  const suppression = await Suppression.load(ctx, options, { domains: true, emails: false });

  const client = createApiClient(ctx, await resolveConnection(ctx));
  const output = await openOutput(options.output, ctx.stdout);
  const writer = await createRowWriter<CompanyRow>(format, output.sink, {
    columns,
    toJson: (row) => row,
    escapeFormulas: options.escapeFormulas,
    bom: options.bom,
  });
  const stackFilter = localStackFilter(options.filters);
  // An excluded company is not written and does not count towards --max.
  const keep = suppression.active
    ? (row: CompanyRow) => (stackFilter?.(row) ?? true) && suppression.keepsDomain(row.domain)
    : stackFilter;
  let meta: CompaniesMeta | undefined;
  let written = 0;
  let fetched = 0;
  let stoppedAtMax = false;
  // One page ahead: the next page is on its way (the service builds it, undici reads it) while this
  // one is checked and written, so a long export takes about the service's time per page rather
  // than the service's plus ours. Without --max the client does it, asking for the next page as soon
  // as a body arrives; with --max the job does, once it knows the page will be written (no call is
  // made for a page that is not written), which is after the check. One page ahead, never two: each
  // page held is megabytes.
  const clientReadsAhead = options.max === undefined;
  // With --max and every filter applied by the service, one page of --max rows per query holds every
  // row that will be written: `--max 5` asks for 5 rows, not a page of 1,000 to throw 995 away.
  const pageSize =
    options.max !== undefined && keep === undefined
      ? Math.min(options.max, ctx.global.pageSize ?? CLIENT_DEFAULTS.pageSize)
      : undefined;
  // A long listing is split into parts walked at once where that lists the same companies (companies/split.ts).
  const split = splitOptions(ctx.reporter, options.filters, options.concurrency, options.max);
  const walk = walkCompanies(client, companyQueries(options.filters), { readAhead: clientReadsAhead, pageSize, split });
  const count = (): SetCount => countSet(options.filters, walk.answers);
  const record = () =>
    runRecord({
      command: 'companies',
      parameters: { max: options.max ?? null, ...suppression.parameters() },
      startedAt,
      output: options.output,
      rows: written,
      filters: filtersRecord(options.filters),
      meta,
      setCount: countFields(meta, count()),
      stoppedAtMax,
      excluded: suppression.record(),
    });

  return runJob(ctx, {
    startedAt,
    progress: 'Fetching companies',
    output,
    summary: { path: options.summary, record },
    async work(progress) {
      await checkLocalTechnologies(client, options.filters);
      let nextChunk: Promise<IteratorResult<MergedChunk<CompanyRow>>> | undefined = walk.chunks.next();
      while (nextChunk !== undefined) {
        const result: IteratorResult<MergedChunk<CompanyRow>> = await nextChunk;
        nextChunk = undefined;
        if (result.done) break;
        const chunk = result.value;
        meta = setMeta(options.filters, walk.answers);
        fetched += chunk.rows.length;
        let rows = keep ? chunk.rows.filter(keep) : chunk.rows;
        if (options.max !== undefined && written + rows.length >= options.max) {
          stoppedAtMax = written + rows.length > options.max || !chunk.last;
          rows = rows.slice(0, options.max - written);
        } else if (!chunk.last && !clientReadsAhead) {
          nextChunk = walk.chunks.next();
          // Its failure, if any, is thrown when its turn comes; until then it must not count as unhandled.
          nextChunk.catch(() => {});
        }
        await writer.writeRows(rows);
        if (clientReadsAhead && !chunk.last) nextChunk = walk.chunks.next();
        written += rows.length;
        // --max ends the run at its count; without it, the service's count is the whole listing.
        const listed = listedCompanies(walk.answers);
        const total = options.max !== undefined ? Math.min(listed ?? options.max, options.max) : listed;
        progress.update({ done: options.max !== undefined ? written : fetched, total, noun: 'companies' });
      }
      // Stopped at --max with pages left: let the listing go (nothing is in flight).
      await walk.chunks.return(undefined);
      if (written === 0) throw noMatch(options.filters, fetched, suppression.removed.domains);
      await writer.finish(
        documentMeta(format, meta === undefined ? undefined : { ...meta, ...countFields(meta, count()) }, record),
      );
      await output.writeSidecar('.meta.json', metaJson(record()));
      await output.commit();
    },
    onFailure() {
      // Not awaited: a page fetched ahead may still be in flight; closing the client (cleanup) ends it.
      void walk.chunks.return(undefined).catch(() => {});
    },
    async writeEmptyResult(error) {
      // Only valid filters that match nobody (exit 3); a typo stays an error whatever --allow-empty says.
      if (!(options.allowEmpty && knownFailure(error)?.exitCode === ExitCode.unanswerable)) return false;
      await writer.finish(documentMeta(format, meta, record));
      await output.commit();
      return true;
    },
    written: () => ({ rows: written, noun: ['company', 'companies'], path: options.output }),
    report() {
      const provenance = provenanceLine(meta);
      if (provenance) ctx.reporter.info(provenance);
      if (stoppedAtMax) ctx.reporter.caveat(stoppedAtMaxLine(options.max!, count()));
      suppression.report(ctx);
      const sidecar = output.sidecarPath('.meta.json');
      if (sidecar) ctx.reporter.info(`Where the data came from: ${sidecar}.`);
    },
  });
}

/** The service had companies for the first technology, but the filters it cannot express left none. */
function noMatch(filters: CompanyFilters, fetched: number, excluded: number): EmptyResultError {
  if (excluded > 0) {
    return new EmptyResultError(
      `no company is left to write: the ${countOf(excluded, 'company', 'companies')} that matched all the filters ${excluded === 1 ? 'is' : 'are'} on --exclude-domains.`,
    );
  }
  const others = describeFilters({
    ...filters,
    technologies: filters.technologies.slice(1),
    notTechnologies: filters.notTechnologies.slice(1),
    employeeRanges: [],
    countries: [],
  });
  return new EmptyResultError(
    `no company matched all the filters: the service had ${formatCount(fetched)} ${fetched === 1 ? 'company' : 'companies'} for "${filters.technologies[0]}", none of which also ${others}.`,
  );
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
