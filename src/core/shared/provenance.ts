import type { CompaniesMeta } from '../../api/index.js';
import { fillRateSentence } from '../../ui/closing.js';
import type { ExclusionRecord } from './exclusion.js';
import { jsonSafe } from '../../util/display-safe.js';

const SPARSE_BELOW_PERCENT = 50;

/**
 * Where the data came from, kept in front of the person. On a terminal one line (the source, and
 * the fields the dataset rarely fills); with --verbose (`full`) one short sentence a line: the
 * source, the scope, then how rarely each sparse field is filled. Five lines after every run were
 * read once and then scrolled past (issue 36).
 */
export function provenanceLine(meta: CompaniesMeta | undefined, full = false): string {
  const source = meta?.source;
  // `crawl` is optional (contract row 39): a service that does not say which crawl answered is not wrong.
  const crawl = typeof source?.['crawl'] === 'string' ? `crawl ${source['crawl']}` : undefined;
  const detail = source
    ? [source.method, source.history_since ? `since ${source.history_since}` : undefined, crawl]
        .filter(Boolean)
        .join(', ')
    : '';
  const named = source ? `${source.dataset ?? source.publisher ?? 'unknown'}${detail ? ` (${detail})` : ''}` : '';
  const sparse = sparseFields(meta);
  if (!full) {
    // One line that fits 80 columns: the source's name is in FILE.meta.json and under --verbose.
    const rare = sparse.map(([field, percent]) => `${field} ${proportion(percent)}`).join(', ');
    if (rare) return `Sparse fields: ${rare} (--verbose: more).`;
    return named ? `Source: ${named}.` : '';
  }
  const lines: string[] = [];
  if (named) lines.push(`Source: ${named}.`);
  if (meta?.scope) lines.push(`Scope: ${meta.scope}.`);
  for (const [field, percent] of sparse) {
    const sentence = fillRateSentence(field, percent);
    lines.push(`${sentence[0]?.toUpperCase()}${sentence.slice(1)}.`);
  }
  return lines.join('\n');
}

/** A fill rate in a few characters: "1/9" (1 in 9 rows). */
function proportion(percent: number): string {
  if (percent <= 0) return 'never';
  if (percent < 1) return '<1/100';
  return `1/${Math.round(100 / percent)}`;
}

function sparseFields(meta: CompaniesMeta | undefined): Array<[string, number]> {
  const rates = meta?.field_fill_rates ?? {};
  return Object.entries(rates).filter(
    (entry): entry is [string, number] => typeof entry[1] === 'number' && entry[1] < SPARSE_BELOW_PERCENT,
  );
}

/** The commands that write rows: each has --summary FILE and writes FILE.meta.json beside -o FILE. */
export const ROW_COMMANDS = ['companies', 'contacts', 'verify', 'pipeline'] as const;
export type RowCommand = (typeof ROW_COMMANDS)[number];

/** A command's own counts: a field it does not count is null in its record, never absent. */
interface RunDetails {
  run_id?: string;
  resumed?: boolean;
  companies_seen?: number;
  domains?: unknown;
  contacts?: unknown;
  addresses?: unknown;
  verification?: unknown;
  calls?: number;
  rows_received?: number;
  no_match_reason?: string | null;
}

export interface RunRecordInput {
  command: RowCommand;
  parameters: Record<string, unknown>;
  /** Date.now() when the run started. */
  startedAt: number;
  output: string | undefined;
  /** Data rows in the output (with --keep-empty, its rows for companies without contacts too). */
  rows: number;
  /** The company filters (companies, pipeline). */
  filters?: Record<string, unknown>;
  /** The service's provenance of the data: source, scope and, for companies, fill rates. */
  meta?: { source?: unknown; scope?: unknown; field_fill_rates?: unknown } | null;
  /** What the service counted of the set asked for (companies: total, contact_count or service_count). */
  setCount?: Record<string, unknown>;
  stoppedAtMax?: boolean;
  /** What --exclude-domains and --exclude-emails removed. */
  excluded?: ExclusionRecord;
  /** --keep-empty: the rows written for companies without a named contact; undefined when not asked. */
  keptEmpty?: number;
  /** What the filters applied on each row (--industry, --max-rank, …) removed; undefined when none applies. */
  filteredLocally?: { companies: number; filters: string[] };
  details?: RunDetails;
}

/**
 * The record of a run: `--summary FILE`, `FILE.meta.json` and the xlsx sheet "About this list" are
 * all this one record, with the same fields on every command (null where a command has nothing to
 * say), so one script reads them all. docs/run-record.md lists the fields.
 */
export function runRecord(input: RunRecordInput) {
  const details = input.details ?? {};
  return {
    command: input.command,
    parameters: input.parameters,
    filters: input.filters ?? null,
    started_at: new Date(input.startedAt).toISOString(),
    exported_at: new Date().toISOString(),
    output: input.output ?? null,
    rows: input.rows,
    stopped_at_max: input.stoppedAtMax ?? false,
    total: input.setCount?.['total'] ?? null,
    contact_count: input.setCount?.['contact_count'] ?? null,
    service_count: input.setCount?.['service_count'] ?? null,
    source: input.meta?.source ?? null,
    scope: input.meta?.scope ?? null,
    field_fill_rates: input.meta?.field_fill_rates ?? null,
    excluded: input.excluded ?? { domains: null, emails: null },
    kept_empty: input.keptEmpty ?? null,
    filtered_locally: input.filteredLocally ?? null,
    run_id: details.run_id ?? null,
    resumed: details.resumed ?? false,
    companies_seen: details.companies_seen ?? null,
    domains: details.domains ?? null,
    contacts: details.contacts ?? null,
    addresses: details.addresses ?? null,
    verification: details.verification ?? null,
    calls: details.calls ?? null,
    rows_received: details.rows_received ?? null,
    no_match_reason: details.no_match_reason ?? null,
  };
}
export type RunRecord = ReturnType<typeof runRecord>;

/** FILE.meta.json: the run record, as JSON. */
export function metaJson(record: RunRecord): string {
  return `${jsonSafe(JSON.stringify(record, null, 2))}\n`;
}

/**
 * What the writer's `finish` gets: a workbook's "About this list" sheet shows the run record; JSON
 * keeps the document meta it has always ended with.
 */
export function documentMeta(format: string, jsonMeta: unknown, record: () => RunRecord): unknown {
  return format === 'xlsx' ? record() : jsonMeta;
}
