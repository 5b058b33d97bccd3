import { z } from 'zod';
import { UnanswerableError, type CompaniesMeta, type CompanyPage, type CompanyRow } from '../../api/index.js';
import { UsageError } from '../../exit-codes.js';
import { checkOutputPath, openOutput } from '../../io/output.js';
import { createRowWriter } from '../../io/writers.js';
import { createApiClient } from '../../runtime/api-client.js';
import { resolveConnection } from '../../runtime/connection.js';
import type { RunContext } from '../../runtime/context.js';
import { formatCount } from '../../ui/format-count.js';
import { COMPANY_COLUMNS, COMPANY_TABLE_COLUMNS } from '../company-columns.js';
import { describeFilters, localStackFilter, serviceQuery, validateCompanyFilters, withCompanyFilters, type CompanyFilters } from '../company-filters.js';
import { outputOptions } from '../job-options.js';
import { planOutput } from '../output-plan.js';
import { provenanceLine } from '../provenance.js';
import { runJob } from './runner.js';

/** `prospect companies`: its flags (the input) and the job's options (the output). */
export const companiesOptionsSchema = withCompanyFilters({
  ...outputOptions,
  max: z.number().int().optional(),
  allowEmpty: z.boolean().default(false),
});
export type CompaniesFlags = z.input<typeof companiesOptionsSchema>;
export type CompaniesOptions = z.output<typeof companiesOptionsSchema>;

export async function runCompanies(ctx: RunContext, flags: CompaniesFlags): Promise<number> {
  const startedAt = Date.now();
  const options = companiesOptionsSchema.parse(flags);
  validateCompanyFilters(options.filters);
  if (options.max !== undefined && (!Number.isInteger(options.max) || options.max < 1)) {
    throw new UsageError('--max must be a whole number of at least 1.');
  }
  const { format, columns } = planOutput(ctx, options, COMPANY_COLUMNS, COMPANY_TABLE_COLUMNS);
  await checkOutputPath(options.output);

  const client = createApiClient(ctx, await resolveConnection(ctx));
  const output = await openOutput(options.output, ctx.stdout);
  const writer = await createRowWriter<CompanyRow>(format, output.sink, { columns, toJson: (row) => row, escapeFormulas: options.escapeFormulas });
  const keep = localStackFilter(options.filters);
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
  const pageIterator = client.companies(serviceQuery(options.filters), { readAhead: clientReadsAhead })[Symbol.asyncIterator]();

  return runJob(ctx, {
    startedAt,
    progress: 'Fetching companies',
    output,
    async work(progress) {
      let nextPage: Promise<IteratorResult<CompanyPage>> | undefined = pageIterator.next();
      while (nextPage !== undefined) {
        const result: IteratorResult<CompanyPage> = await nextPage;
        nextPage = undefined;
        if (result.done) break;
        const page = result.value;
        meta ??= page.meta;
        fetched += page.data.length;
        let rows = keep ? page.data.filter(keep) : page.data;
        if (options.max !== undefined && written + rows.length >= options.max) {
          stoppedAtMax = written + rows.length > options.max || page.nextCursor !== null;
          rows = rows.slice(0, options.max - written);
        } else if (page.nextCursor !== null && !clientReadsAhead) {
          nextPage = pageIterator.next();
          // Its failure, if any, is thrown when its turn comes; until then it must not count as unhandled.
          nextPage.catch(() => {});
        }
        await writer.writeRows(rows);
        if (clientReadsAhead && page.nextCursor !== null) nextPage = pageIterator.next();
        written += rows.length;
        // --max ends the run at its count; without it, the service's count is the whole listing.
        const total = options.max !== undefined ? Math.min(meta?.total ?? options.max, options.max) : meta?.total;
        progress.update({ done: options.max !== undefined ? written : fetched, total, noun: 'companies' });
      }
      // Stopped at --max with pages left: let the listing go (nothing is in flight).
      await pageIterator.return?.();
      if (written === 0) throw noMatch(options.filters, fetched);
      await writer.finish(meta);
      await output.writeSidecar('.meta.json', sidecar(options, meta, written, stoppedAtMax));
      await output.commit();
    },
    onFailure() {
      // Not awaited: a page fetched ahead may still be in flight; closing the client (cleanup) ends it.
      void pageIterator.return?.().catch(() => {});
    },
    async writeEmptyResult(error) {
      if (!(error instanceof UnanswerableError && options.allowEmpty)) return false;
      await writer.finish(meta);
      await output.commit();
      return true;
    },
    written: () => ({ rows: written, noun: ['company', 'companies'], path: options.output }),
    report() {
      const provenance = provenanceLine(meta);
      if (provenance) ctx.reporter.info(provenance);
      if (stoppedAtMax) {
        const total = typeof meta?.total === 'number' ? ` of ${formatCount(meta.total)}` : '';
        ctx.reporter.info(`Stopped at --max ${options.max}${total}; more companies match.`);
      }
      if (options.output) ctx.reporter.info(`Where the data came from: ${options.output}.meta.json.`);
    },
  });
}

/** The service had companies for the first technology, but the filters it cannot express left none. */
function noMatch(filters: CompanyFilters, fetched: number): UnanswerableError {
  const others = describeFilters({ ...filters, technologies: filters.technologies.slice(1), notTechnologies: filters.notTechnologies.slice(1) });
  return new UnanswerableError(
    `no company matched all the filters: the service had ${formatCount(fetched)} ${fetched === 1 ? 'company' : 'companies'} for "${filters.technologies[0]}", none of which also ${others}.`,
  );
}

function sidecar(options: CompaniesOptions, meta: CompaniesMeta | undefined, rows: number, stoppedAtMax: boolean): string {
  const record = {
    exported_at: new Date().toISOString(),
    rows,
    stopped_at_max: stoppedAtMax,
    filters: options.filters,
    source: meta?.source,
    scope: meta?.scope,
    field_fill_rates: meta?.field_fill_rates,
    total: meta?.total,
    contact_count: meta?.contact_count,
  };
  return `${JSON.stringify(record, null, 2)}\n`;
}
