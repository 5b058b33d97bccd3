import { UnanswerableError, type CompaniesMeta, type CompanyPage, type CompanyRow } from '../api/index.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { selectColumns } from '../io/columns.js';
import { checkOutputPath, openOutput, resolveFormat, type OutputFlags } from '../io/output.js';
import { createRowWriter } from '../io/writers.js';
import { createApiClient } from '../runtime/api-client.js';
import { resolveConnection } from '../runtime/connection.js';
import type { RunContext } from '../runtime/context.js';
import { rateText, startProgress, formatCount } from '../ui/progress.js';
import { COMPANY_COLUMNS, COMPANY_TABLE_COLUMNS } from './company-columns.js';
import { describeFilters, localStackFilter, serviceQuery, validateCompanyFilters, type CompanyFilters } from './company-filters.js';
import { provenanceLine } from './provenance.js';

export interface CompaniesExportOptions extends Omit<OutputFlags, 'summary'> {
  filters: CompanyFilters;
  max?: number;
  allowEmpty: boolean;
}

export async function exportCompanies(ctx: RunContext, options: CompaniesExportOptions): Promise<number> {
  validateCompanyFilters(options.filters);
  if (options.max !== undefined && (!Number.isInteger(options.max) || options.max < 1)) {
    throw new UsageError('--max must be a whole number of at least 1.');
  }
  const format = resolveFormat({ format: options.format, outputPath: options.output, stdoutIsTTY: Boolean(ctx.stdout.isTTY) });
  const columnNames = options.columns ?? (format === 'table' ? COMPANY_TABLE_COLUMNS.join(',') : undefined);
  const columns = selectColumns(COMPANY_COLUMNS, columnNames);
  await checkOutputPath(options.output);

  const client = createApiClient(ctx, await resolveConnection(ctx));
  const output = await openOutput(options.output, ctx.stdout);
  const writer = await createRowWriter<CompanyRow>(format, output.sink, {
    columns,
    toJson: (row) => row,
    escapeFormulas: options.escapeFormulas,
  });
  const keep = localStackFilter(options.filters);
  const progress = await startProgress(ctx.reporter, ctx.stderr, 'Fetching companies…');
  const startedAt = Date.now();
  let meta: CompaniesMeta | undefined;
  let written = 0;
  let fetched = 0;
  let stoppedAtMax = false;
  let pages = 0;
  // One page ahead: the next page is on its way (the service builds it, undici reads it) while this
  // one is checked and written, so a long export takes about the service's time per page rather
  // than the service's plus ours. Never past --max: no call is made for a page that is not written.
  const pageIterator = client.companies(serviceQuery(options.filters))[Symbol.asyncIterator]();
  let nextPage: Promise<IteratorResult<CompanyPage>> | undefined = pageIterator.next();
  try {
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
      } else if (page.nextCursor !== null) {
        nextPage = pageIterator.next();
        // Its failure, if any, is thrown when its turn comes; until then it must not count as unhandled.
        nextPage.catch(() => {});
      }
      await writer.writeRows(rows);
      written += rows.length;
      pages += 1;
      progress.update(`Fetching companies… page ${pages} · ${rateText(written, 'rows', startedAt)}`);
    }
    // Stopped at --max with pages left: let the listing go (nothing is in flight).
    await pageIterator.return?.();
    if (written === 0) {
      throw new UnanswerableError(
        `no company matched all the filters: the service had ${formatCount(fetched)} ${fetched === 1 ? 'company' : 'companies'} for "${options.filters.technologies[0]}", none of which also ${describeFilters({ ...options.filters, technologies: options.filters.technologies.slice(1), notTechnologies: options.filters.notTechnologies.slice(1) })}.`,
      );
    }
    await writer.finish(meta);
    await output.writeSidecar('.meta.json', sidecar(options, meta, written, stoppedAtMax));
    await output.commit();
  } catch (error) {
    progress.stop();
    // Not awaited: a page fetched ahead may still be in flight; closing the client (cleanup) ends it.
    void pageIterator.return?.().catch(() => {});
    if (error instanceof UnanswerableError && options.allowEmpty) {
      await writer.finish(meta);
      await output.commit();
      ctx.reporter.error(`${error.message} Wrote an empty result (--allow-empty).`);
      return ExitCode.ok;
    }
    await output.abort();
    throw error;
  }
  progress.stop();
  ctx.reporter.info(provenanceLine(written, meta));
  if (stoppedAtMax) {
    const total = typeof meta?.total === 'number' ? ` of ${formatCount(meta.total)}` : '';
    ctx.reporter.info(`Stopped at --max ${options.max}${total}; more companies match.`);
  }
  if (options.output) ctx.reporter.info(`Wrote ${options.output} and ${options.output}.meta.json.`);
  return ExitCode.ok;
}

function sidecar(options: CompaniesExportOptions, meta: CompaniesMeta | undefined, rows: number, stoppedAtMax: boolean): string {
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
