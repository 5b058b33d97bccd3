import { z } from 'zod';
import {
  CLIENT_DEFAULTS,
  RequestError,
  type CompanyQuery,
  type CompanyRow,
  type ProspectClient,
} from '../../api/index.js';
import { UsageError } from '../../exit-codes.js';
import type { Column } from '../../io/columns.js';
import { selectColumns } from '../../io/columns.js';
import { checkOutputPath, openOutput, resolveFormat } from '../../io/output.js';
import { createRowWriter, type OutputFormat } from '../../io/writers.js';
import type { RunContext } from '../../runtime/context.js';
import type { JobDeps } from '../../runtime/job-deps.js';
import { NOT_AVAILABLE, renderBarChart, type ChartRow } from '../../ui/bar-chart.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import type { Progress } from '../../ui/progress.js';
import { splitOptions } from '../companies/split.js';
import {
  describeFilters,
  filtersRecord,
  filtersRows,
  locallyApplied,
  normalizeCountries,
  validateCompanyFilters,
  withCompanyFilters,
  type CompanyFilters,
} from '../companies/filters.js';
import { COUNT_FLAGS } from '../../options/command-flags.js';
import { flagShape } from '../shared/flags.js';
import { Exclusions } from '../shared/exclusion.js';
import { provenanceLine } from '../shared/provenance.js';
import {
  breakdownByQueries,
  breakdownRows,
  DIMENSIONS,
  employeeRangeLabels,
  isQueryDimension,
  rowTally,
  segmentContactsUnavailable,
  withTechnologyContacts,
  type Breakdown,
  type BreakdownRow,
  type Dimension,
} from './breakdown.js';
import { askSetSize, planSetWalk, type SetSize } from './set-size.js';
import { runJob } from '../shared/runner.js';

/** `prospect count`: its flags (the input) and the job's options (the output). */
const countOptionsSchema = withCompanyFilters(flagShape(COUNT_FLAGS));
export type CountFlags = z.input<typeof countOptionsSchema>;
type CountOptions = z.output<typeof countOptionsSchema>;

type RowFilter = (row: CompanyRow) => boolean;

/** What the run found, for the output and the report. */
interface Counted {
  size: SetSize;
  breakdown?: Breakdown;
}

export async function runCount(ctx: RunContext, flags: CountFlags, deps: JobDeps): Promise<number> {
  const startedAt = Date.now();
  const parsed = countOptionsSchema.parse(flags);
  validateCompanyFilters(parsed.filters);
  const dimension = parseDimension(parsed.by);
  const svg = parsed.output !== undefined && /\.svg$/i.test(parsed.output);
  if (svg && dimension === undefined)
    throw new UsageError(`-o ${parsed.output} draws the chart of a breakdown: add --by ${DIMENSIONS.join('|')}.`);
  const format = svg
    ? 'svg'
    : resolveFormat({
        format: parsed.format,
        outputPath: parsed.output,
        stdoutIsTTY: Boolean(ctx.stdout.isTTY),
        bom: parsed.bom,
      });
  await checkOutputPath(parsed.output);
  const options = { ...parsed, filters: await normalizeCountries(parsed.filters) };
  const exclusions = await Exclusions.load(ctx, options, { domains: true, emails: false });
  // The service cannot leave a list of companies out of its count: with one, the set is walked.
  const accept = exclusions.active ? (row: CompanyRow) => exclusions.keepsDomain(row.domain) : undefined;

  const client = deps.client(await deps.connection());
  const output = await openOutput(options.output, ctx.stdout);
  const pageSize = ctx.global.pageSize ?? CLIENT_DEFAULTS.pageSize;
  let counted: Counted | undefined;
  if (dimension === 'change') return runChangeCount(ctx, { client, output, format, options, accept, startedAt });

  return runJob(ctx, {
    startedAt,
    progress: 'Counting…',
    output,
    async work(progress) {
      counted =
        dimension === undefined
          ? { size: await sizeOf(ctx, client, options, pageSize, progress, accept) }
          : await breakdownOf(ctx, client, options, dimension, pageSize, progress, accept);
      progress.stop();
      if (format === 'svg') {
        const { renderSvgChart } = await import('../../io/svg-chart.js');
        await output.sink.write(
          renderSvgChart(chartRows(counted.breakdown!, options.top), chartTitle(counted.breakdown!, options.filters)),
        );
      } else if (format === 'table') {
        await output.sink.write(
          counted.breakdown
            ? renderBarChart(chartRows(counted.breakdown, options.top), ctx.stdout.columns ?? 80)
            : totalText(counted.size),
        );
      } else {
        await writeRows(format, output.sink, options, counted, exclusions);
      }
      await output.commit();
    },
    written: () => ({
      // The segments shown (the "other" row is not one): "Wrote 15 of 2,998 segments", never all 2,998.
      // Nothing counted, nothing written: a failed count leaves no count behind to call cut short.
      rows: counted === undefined ? 0 : counted.breakdown ? shownSegments(counted.breakdown, options.top) : 1,
      of: counted?.breakdown?.segments.length,
      noun: counted?.breakdown ? ['segment', 'segments'] : ['count', 'counts'],
      path: parsed.output,
    }),
    report() {
      if (counted === undefined) return;
      reportCount(ctx, options, counted);
      exclusions.report(ctx);
    },
  });
}

/** `count --by change`: its own walk, compared with the state's last complete listing (./changes.ts). */
async function runChangeCount(
  ctx: RunContext,
  run: {
    client: ProspectClient;
    output: Awaited<ReturnType<typeof openOutput>>;
    format: OutputFormat | 'svg';
    options: CountOptions;
    accept: RowFilter | undefined;
    startedAt: number;
  },
): Promise<number> {
  const { client, output, format, options, accept } = run;
  if (format === 'svg') throw new UsageError('--by change has no chart: write .csv, .json or a table.');
  const { countChanges, changeCountText, CHANGE_COUNT_COLUMNS } = await import('./changes.js');
  let rows = 0;
  return runJob(ctx, {
    startedAt: run.startedAt,
    progress: 'Comparing…',
    output,
    async work(progress) {
      const counted = await countChanges(ctx, client, options, accept, progress);
      progress.stop();
      rows = counted.rows.length;
      if (format === 'table') await output.sink.write(changeCountText(counted.rows, counted.previous));
      else {
        const writer = await createRowWriter(format, output.sink, {
          columns: selectColumns(CHANGE_COUNT_COLUMNS, options.columns),
          toJson: (row) => row,
          escapeFormulas: options.escapeFormulas,
          bom: options.bom,
        });
        await writer.writeRows(counted.rows);
        await writer.finish({ previous_snapshot: counted.previous ?? null });
      }
      await output.commit();
    },
    written: () => ({ rows, noun: ['count', 'counts'], path: options.output }),
    report: () => {},
  });
}

function parseDimension(by: string | undefined): Dimension | 'change' | undefined {
  if (by === undefined) return undefined;
  const dimension = by.trim().toLowerCase().replace('-', '_');
  if (dimension === 'change') return dimension;
  if (!(DIMENSIONS as readonly string[]).includes(dimension))
    throw new UsageError(`unknown --by "${by}".`, `Break a set down by one of: ${DIMENSIONS.join(', ')}.`);
  return dimension as Dimension;
}

/** The set's size: one call per service query where the service counts it, else a walk of the set. */
async function sizeOf(
  ctx: RunContext,
  client: ProspectClient,
  options: CountOptions,
  pageSize: number,
  progress: Progress,
  accept: RowFilter | undefined,
): Promise<SetSize> {
  const asked = accept ? undefined : await askSetSize(client, options.filters, options.concurrency);
  if (asked !== undefined) return asked;
  return walkSet(ctx, client, options.filters, pageSize, options.concurrency, progress, () => {}, accept);
}

async function breakdownOf(
  ctx: RunContext,
  client: ProspectClient,
  options: CountOptions,
  dimension: Dimension,
  pageSize: number,
  progress: Progress,
  accept: RowFilter | undefined,
): Promise<Counted> {
  if (isQueryDimension(dimension) && !accept && !filtersRows(options.filters)) {
    const values =
      dimension === 'country' ? await countriesOf(ctx, client, options.filters) : employeeRangeLabels(options.filters);
    if (values !== undefined) {
      progress.update({
        done: 0,
        total: values.length,
        noun: dimension === 'country' ? 'countries' : 'employee ranges',
      });
      const breakdown = await breakdownByQueries(client, options.filters, dimension, values, options.concurrency);
      if (breakdown !== undefined)
        return {
          size: { ...breakdown.total, byService: true, meta: breakdown.meta, queries: breakdown.queries ?? [] },
          breakdown,
        };
    }
  }
  const tally = rowTally(dimension, options.filters);
  const size = await walkSet(ctx, client, options.filters, pageSize, options.concurrency, progress, tally.add, accept);
  const walked = tally.finish(size);
  // Contacts per co-used technology are the service's counts of whole segments: with an exclusion
  // list they would count removed companies.
  if (dimension !== 'technology' || walked.segments.length === 0 || accept) return { size, breakdown: walked };
  // A co-used technology is a filter of the service: the contacts of the segments shown are counted there.
  const shown = options.top > 0 ? Math.min(options.top, walked.segments.length) : walked.segments.length;
  ctx.reporter.info(
    `Counting the contacts of the ${countOf(shown, 'technology', 'technologies')} shown: one query each.`,
  );
  return {
    size,
    breakdown: await withTechnologyContacts(client, options.filters, walked, options.top, options.concurrency),
  };
}

/** The countries to ask one by one: those of --country, else the service's list (contract row 36); undefined: walk. */
async function countriesOf(
  ctx: RunContext,
  client: ProspectClient,
  filters: CompanyFilters,
): Promise<string[] | undefined> {
  if (filters.countries.length > 0) return filters.countries.map((country) => country.toLowerCase());
  try {
    return await client.countries();
  } catch (error) {
    // A service without the list (404, or an answer not shaped as one): the set is walked instead.
    if (
      !(error instanceof RequestError) ||
      error.status === undefined ||
      error.status === 401 ||
      error.status === 403 ||
      error.status >= 500
    )
      throw error;
    ctx.reporter.warn('the service does not list its countries, so the set is walked to find them.');
    return undefined;
  }
}

/** A walk of the whole set, its cost said before it starts, with progress by page. */
async function walkSet(
  ctx: RunContext,
  client: ProspectClient,
  filters: CompanyFilters,
  pageSize: number,
  concurrency: number,
  progress: Progress,
  onRow: Parameters<Awaited<ReturnType<typeof planSetWalk>>['run']>[0],
  accept?: RowFilter,
): Promise<SetSize> {
  const walk = await planSetWalk(
    client,
    filters,
    pageSize,
    concurrency,
    accept,
    splitOptions(ctx.reporter, filters, concurrency),
  );
  ctx.reporter.info(
    `Walking the set to count it: ${countOf(walk.pages, 'page')} of ` +
      `${countOf(walk.serviceCompanies, 'company', 'companies')}.`,
  );
  return walk.run(onRow, (page) =>
    progress.update({ done: Math.min(page, walk.pages), total: walk.pages, noun: 'pages' }),
  );
}

function chartRows(breakdown: Breakdown, top: number): ChartRow[] {
  return breakdownRows(breakdown, top).map((row) => ({
    label: row.value,
    companies: row.companies,
    contacts: row.contacts,
    share: row.share,
  }));
}

function chartTitle(breakdown: Breakdown, filters: CompanyFilters): string {
  const by = breakdown.dimension.replace('_', ' ');
  return `${formatCount(breakdown.total.companies)} companies (${describeFilters(filters)}) by ${by}`;
}

function totalText(size: SetSize): string {
  const contacts = size.contacts === undefined ? 'contacts not counted' : countOf(size.contacts, 'named contact');
  return `${countOf(size.companies, 'company', 'companies')} · ${contacts}\n`;
}

async function writeRows(
  format: Exclude<OutputFormat, 'table'>,
  sink: Parameters<typeof createRowWriter>[1],
  options: CountOptions,
  counted: Counted,
  exclusions: Exclusions,
): Promise<void> {
  const meta = { ...countMeta(options, counted), ...(exclusions.active ? { excluded: exclusions.record() } : {}) };
  if (counted.breakdown) {
    const dimension = counted.breakdown.dimension;
    const all: Array<Column<BreakdownRow>> = [
      { name: dimension, get: (row) => row.value },
      { name: 'companies', get: (row) => row.companies },
      { name: 'contacts', get: (row) => row.contacts ?? NOT_AVAILABLE },
      { name: 'share', get: (row) => Math.round(row.share * 10_000) / 10_000 },
    ];
    const writer = await createRowWriter(format, sink, {
      columns: selectColumns(all, options.columns),
      toJson: (row) => ({
        [dimension]: row.value,
        companies: row.companies,
        contacts: row.contacts ?? null,
        share: row.share,
        ...(row.other ? { other: true } : {}),
      }),
      escapeFormulas: options.escapeFormulas,
      bom: options.bom,
    });
    await writer.writeRows(breakdownRows(counted.breakdown, options.top));
    await writer.finish(meta);
    return;
  }
  const all: Array<Column<SetSize>> = [
    { name: 'companies', get: (size) => size.companies },
    { name: 'contacts', get: (size) => size.contacts ?? NOT_AVAILABLE },
  ];
  const writer = await createRowWriter(format, sink, {
    columns: selectColumns(all, options.columns),
    toJson: (size) => ({ companies: size.companies, contacts: size.contacts ?? null }),
    escapeFormulas: options.escapeFormulas,
    bom: options.bom,
  });
  await writer.writeRows([counted.size]);
  await writer.finish(meta);
}

/** `--format json`'s meta: where the numbers come from, what was asked, and whether they are exact. */
function countMeta(options: CountOptions, counted: Counted): Record<string, unknown> {
  const { size, breakdown } = counted;
  const byService = breakdown ? breakdown.byService : size.byService;
  return {
    source: size.meta?.source,
    scope: size.meta?.scope,
    filters: filtersRecord(options.filters),
    queries_sent: size.queries.map(queryParameters),
    by: breakdown?.dimension,
    counted_by: byService ? 'service' : 'walk',
    exact: { companies: true, contacts: byService && (breakdown?.total.contacts ?? size.contacts) !== undefined },
    total: { companies: size.companies, contacts: size.contacts ?? null },
    ...(breakdown ? { segment_contacts: segmentContactsRecord(breakdown, options.top, options.filters) } : {}),
    ...(breakdown?.overlapping ? { shares_overlap: true } : {}),
  };
}

/** Whether the segments' contacts were counted, and by whom; where not, why (a null in the rows is never bare). */
function segmentContactsRecord(breakdown: Breakdown, top: number, filters: CompanyFilters): Record<string, unknown> {
  const rows = breakdownRows(breakdown, top);
  const missing = rows.filter((row) => row.contacts === undefined).map((row) => row.value);
  if (missing.length === 0) return { available: true, counted_by: 'service' };
  const reason = segmentContactsReason(breakdown, filters);
  if (missing.length === rows.length) return { available: false, reason };
  return { available: true, counted_by: 'service', not_available: missing, reason };
}

/** Why some segments have no contact count. */
function segmentContactsReason(breakdown: Breakdown, filters: CompanyFilters): string {
  if (filtersRows(filters)) return 'the service cannot count a set filtered by industry or rank';
  const unavailable = segmentContactsUnavailable(breakdown.dimension);
  if (unavailable !== undefined) return unavailable;
  if (breakdown.dimension === 'technology' && breakdown.segments.some((segment) => segment.contacts !== undefined)) {
    return 'the "other" row (companies that run none of the technologies shown) is not a filter the service can count';
  }
  return 'the service did not count the segments (it does not take repeated technology parameters)';
}

/** A query as the parameters it was sent with. */
function queryParameters(query: CompanyQuery): Record<string, unknown> {
  return {
    technology: [query.technology, ...(query.moreTechnologies ?? [])],
    not_technology: [query.notTechnology, ...(query.moreNotTechnologies ?? [])].filter((name) => name !== undefined),
    employee_range: query.employeeRange,
    country: query.country,
  };
}

function reportCount(ctx: RunContext, options: CountOptions, counted: Counted): void {
  const { size, breakdown } = counted;
  const provenance = provenanceLine(size.meta, ctx.reporter.verbose);
  if (provenance) ctx.reporter.info(provenance);
  const byService = breakdown ? breakdown.byService : size.byService;
  const local = locallyApplied(options.filters);
  ctx.reporter.info(
    byService
      ? 'Counted by the service.'
      : local.length > 0
        ? `Counted by walking the set; ${local.join(', ')} applied locally: the counts are of the filtered set.`
        : 'Counted by walking the set.',
  );
  const notCounted = breakdown ? breakdownRows(breakdown, options.top).filter((row) => row.contacts === undefined) : [];
  if (breakdown && notCounted.some((row) => !row.other)) {
    ctx.reporter.caveat(
      `contacts per ${breakdown.dimension.replace('_', ' ')} are not available ` +
        `(${segmentContactsReason(breakdown, options.filters)})${setContactsText(size.contacts)}.`,
    );
  } else if (breakdown && notCounted.length > 0) {
    ctx.reporter.info(
      `Contacts of the "other" row are not available: ${segmentContactsReason(breakdown, options.filters)}.`,
    );
  } else if (!breakdown && size.contacts === undefined) {
    ctx.reporter.caveat(
      'contacts are not counted: the service did not count this set (it was walked), and company rows ' +
        'do not carry contacts.',
    );
  }
  if (breakdown?.overlapping)
    ctx.reporter.info(
      `A company has several ${breakdown.dimension === 'technology' ? 'technologies' : 'categories'}: ` +
        'shares add up to more than 100%.',
    );
  if (breakdown && options.top > 0 && breakdown.segments.length > options.top) {
    ctx.reporter.info(
      `${formatCount(options.top)} of ${formatCount(breakdown.segments.length)} segments shown, the rest ` +
        'as one "other" row (--top 0 for all).',
    );
  }
  if (options.output) ctx.reporter.info(`Wrote ${options.output}.`);
}

function shownSegments(breakdown: Breakdown, top: number): number {
  return top > 0 ? Math.min(top, breakdown.segments.length) : breakdown.segments.length;
}

function setContactsText(contacts: number | undefined): string {
  return contacts === undefined ? '' : `; the set has ${countOf(contacts, 'named contact')}`;
}
