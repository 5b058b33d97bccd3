/**
 * `companies --state`: the listing kept as a snapshot of its filters, and with --changes the diff
 * written instead of the listing. The snapshot holds the listing as the filters make it, before
 * --exclude-domains, which only leaves rows out of the file.
 */
import type { CompaniesMeta, CompanyRow } from '../../api/index.js';
import type { RunContext } from '../../runtime/context.js';
import { formatCount } from '../../ui/format-count.js';
import type { ChangeKind, ChangeRow, ListingDiff } from '../changes/diff.js';
import { checkNativeSqlite } from '../state-store/native-sqlite.js';
import type { Exclusions } from '../shared/exclusion.js';
import { filtersRecord, localRowFilter, type CompanyFilters } from './filters.js';

interface SnapshotOptions {
  filters: CompanyFilters;
  state?: string | undefined;
  changes: boolean;
  change?: string | undefined;
}

export interface ListingSnapshots {
  /** A page as the service gave it: the rows to write (the diff's with --changes), the listing's snapshotted. */
  page(rows: readonly CompanyRow[]): Promise<CompanyRow[]>;
  /** With --changes (and `gone` kept), once the walk is complete: the gone companies to write. */
  gone(): AsyncGenerator<CompanyRow[]>;
  /** Something to say even when no row is written: companies listed, or gone. */
  anyChange(): boolean;
  publishIfComplete(complete: boolean, meta: CompaniesMeta | undefined): Promise<void>;
  abandonUnpublished(): void;
  report(): void;
  record(): Record<string, unknown>;
}

/** The run's snapshots (undefined without --state), opened before any call. */
export async function openSnapshots(
  ctx: RunContext,
  options: SnapshotOptions,
  exclusions: Exclusions,
  /** JSON and NDJSON: each technology entry gets its observed dates. */
  observe: boolean,
): Promise<ListingSnapshots | undefined> {
  if (options.state === undefined) return undefined;
  if (!options.state.startsWith('pg:')) await checkNativeSqlite();
  const { openListingDiff, parseChangeKinds } = await import('../changes/open.js');
  const kinds = options.changes ? parseChangeKinds(options.change) : undefined;
  const takenAt = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const diff = await openListingDiff(ctx, options.state, filtersRecord(options.filters), takenAt, undefined, observe);
  return new Snapshots(ctx, options, diff, kinds, exclusions, observe);
}

class Snapshots implements ListingSnapshots {
  private readonly stackFilter: ((row: CompanyRow) => boolean) | undefined;
  private published: boolean | undefined;
  private settled = false;

  constructor(
    private readonly ctx: RunContext,
    private readonly options: SnapshotOptions,
    private readonly diff: ListingDiff,
    private readonly kinds: ReadonlySet<ChangeKind> | undefined,
    private readonly exclusions: Exclusions,
    private readonly observe: boolean,
  ) {
    this.stackFilter = localRowFilter(options.filters);
    if (kinds !== undefined && diff.previous === undefined)
      ctx.reporter.caveat(
        `${options.state} has no complete listing of these filters yet: every company is written as new, ` +
          'and this listing is what the next --changes compares with.',
      );
  }

  async page(rows: readonly CompanyRow[]): Promise<CompanyRow[]> {
    const listed = this.stackFilter ? rows.filter(this.stackFilter) : rows;
    const kept = await this.compare(listed);
    return this.exclusions.active ? kept.filter((row) => this.exclusions.keepsDomain(row.domain)) : kept;
  }

  private async compare(listed: readonly CompanyRow[]): Promise<CompanyRow[]> {
    if (this.kinds) return this.diff.page(listed, this.kinds);
    if (this.observe) return (await this.diff.page(listed)).map(plainRow);
    // Without --changes a CSV's rows are the service's as they are: the diff only keeps them.
    await this.diff.page(listed, new Set());
    return [...listed];
  }

  async *gone(): AsyncGenerator<CompanyRow[]> {
    if (!this.kinds?.has('gone')) return;
    for await (const rows of this.diff.gone())
      yield this.exclusions.active ? rows.filter((row) => this.exclusions.keepsDomain(row.domain)) : rows;
  }

  anyChange(): boolean {
    return this.kinds !== undefined && (this.diff.listed > 0 || this.diff.counts.gone > 0);
  }

  async publishIfComplete(complete: boolean, meta: CompaniesMeta | undefined): Promise<void> {
    this.settled = true;
    if (!complete) {
      await this.diff.abandon();
      return;
    }
    this.published = await this.diff.publish(meta?.source === undefined ? undefined : JSON.stringify(meta.source));
  }

  /** A failed or cut run's snapshot goes; the last complete one stays. */
  abandonUnpublished(): void {
    if (this.settled) return;
    this.settled = true;
    void this.diff.abandon().catch(() => {});
  }

  report(): void {
    const { counts, previous } = this.diff;
    if (this.kinds !== undefined && previous !== undefined) {
      const gone = this.kinds.has('gone') ? `, ${formatCount(counts.gone)} gone` : '';
      this.ctx.reporter.info(
        `Since ${previous.takenAt}: ${formatCount(counts.new)} new, ${formatCount(counts.changed)} changed${gone} ` +
          `(${formatCount(counts.unchanged)} unchanged).`,
      );
    }
    if (this.published === false)
      this.ctx.reporter.caveat(
        `another run published a listing of these filters in ${this.options.state} while this one walked: ` +
          'that one stays the last complete snapshot, and the next --changes compares with it.',
      );
    if (this.published === undefined && this.settled)
      this.ctx.reporter.info(`The listing was cut: ${this.options.state} keeps its last complete snapshot.`);
  }

  record(): Record<string, unknown> {
    const { counts, previous } = this.diff;
    return {
      previous_snapshot: previous?.takenAt ?? null,
      new: counts.new,
      changed: counts.changed,
      gone: this.kinds?.has('gone') ? counts.gone : null,
      unchanged: counts.unchanged,
      snapshot_published: this.published ?? false,
    };
  }
}

/** A row written without --changes: the service's, with each technology's observed dates. */
function plainRow(row: ChangeRow): CompanyRow {
  const {
    change: _change,
    technologies_added: _added,
    technologies_removed: _removed,
    first_seen: _first,
    previous_snapshot: _previous,
    ...company
  } = row;
  return company;
}
