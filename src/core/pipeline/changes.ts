/**
 * `pipeline --state`: the listing kept as a snapshot of its filters, page by page, published only
 * once the walk is complete and the output in place. With --changes each page is compared with the
 * state's last complete snapshot of the filters, and contacts are asked only for the companies of
 * the kinds kept (new and changed by default). The run's snapshot is pending under its run id, so a
 * resumed run carries on with it.
 */
import type { CompanyRow } from '../../api/index.js';
import type { RunContext } from '../../runtime/context.js';
import { formatCount } from '../../ui/format-count.js';
import type { ChangeKind, ListingDiff } from '../changes/diff.js';
import { openListingDiff } from '../changes/open.js';
import { filtersRecord } from '../companies/filters.js';
import type { Checkpoint, ListedChanges } from './state/checkpoint.js';
import type { PipelineOptions } from './options.js';

export interface PipelineChanges {
  /** Companies listed (after the filters applied here), whatever their kind, a resumed run's earlier part included. */
  readonly listed: number;
  /** The companies by kind so far, the resumed run's earlier part (its checkpoint's) included. */
  counts(): ListedChanges;
  /**
   * The companies to ask contacts for: with --changes those of the kinds kept, else every one. The page
   * is in the pending snapshot, durably, once it returns: a checkpoint may then point past it.
   */
  page(rows: readonly CompanyRow[]): Promise<CompanyRow[]>;
  /** `complete`: the walk reached the listing's end (not cut by --max); only then is the snapshot kept. */
  publish(source: unknown, complete: boolean): Promise<void>;
  abandon(): Promise<void>;
  report(): void;
  record(): Record<string, unknown>;
}

/** `kinds`: --changes's (undefined without it: the listing is only kept). */
export async function openPipelineChanges(
  ctx: RunContext,
  options: PipelineOptions,
  checkpoint: Checkpoint,
  kinds: ReadonlySet<ChangeKind> | undefined,
): Promise<PipelineChanges> {
  const takenAt = new Date(checkpoint.now).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const filters = filtersRecord(options.filters);
  const diff = await openListingDiff(ctx, options.state!, filters, takenAt, checkpoint.run_id, false);
  // A resumed run whose pending snapshot is not there (removed, or the snapshot it compared with replaced)
  // lacks the pages walked before: its diff stands, but it must not replace the last complete snapshot.
  const whole = diff.resumed || (checkpoint.positions ?? []).length === 0;
  if (kinds !== undefined && diff.previous === undefined)
    ctx.reporter.caveat(
      `${options.state} has no complete listing of these filters yet: every company counts as new, ` +
        'and this listing is what the next --changes compares with.',
    );
  return new Changes(ctx, diff, kinds, whole, options.state!, { ...checkpoint.counters.changes });
}

class Changes implements PipelineChanges {
  /** Whether publish replaced the last complete snapshot; undefined while it has not run, or for a cut walk. */
  private published: boolean | undefined;
  private cut = false;

  constructor(
    private readonly ctx: RunContext,
    private readonly diff: ListingDiff,
    private readonly kinds: ReadonlySet<ChangeKind> | undefined,
    private readonly whole: boolean,
    private readonly state: string,
    /** What the committed pages of the run being resumed counted (zeros for a new run). */
    private readonly before: ListedChanges,
  ) {}

  get listed(): number {
    const { new: added, changed, unchanged } = this.counts();
    return added + changed + unchanged;
  }

  counts(): ListedChanges {
    const { counts } = this.diff;
    const before = this.before;
    return {
      new: before.new + counts.new,
      changed: before.changed + counts.changed,
      unchanged: before.unchanged + counts.unchanged,
    };
  }

  async page(rows: readonly CompanyRow[]): Promise<CompanyRow[]> {
    const kinds = this.kinds;
    const compared = await this.diff.page(rows, kinds ?? new Set());
    return kinds === undefined ? [...rows] : compared;
  }

  async publish(source: unknown, complete: boolean): Promise<void> {
    if (!this.whole || !complete) {
      this.cut = !complete;
      await this.diff.abandon();
      return;
    }
    this.published = await this.diff.publish(source == null ? undefined : JSON.stringify(source));
  }

  abandon(): Promise<void> {
    return this.diff.abandon();
  }

  report(): void {
    const { previous } = this.diff;
    const counts = this.counts();
    if (this.kinds !== undefined && previous !== undefined)
      this.ctx.reporter.info(
        `Since ${previous.takenAt}: ${formatCount(counts.new)} new, ${formatCount(counts.changed)} changed, ` +
          `${formatCount(counts.unchanged)} unchanged; contacts asked for ${[...this.kinds].join(' and ')} only.`,
      );
    if (this.cut) this.ctx.reporter.info(`The listing was cut: ${this.state} keeps its last complete snapshot.`);
    else if (!this.whole)
      this.ctx.reporter.caveat(
        `this resumed run did not find the snapshot its first part was written to: ${this.state} keeps ` +
          'its last complete snapshot, and the next --changes compares with it.',
      );
    if (this.published === false)
      this.ctx.reporter.caveat(
        `another run published a listing of these filters in ${this.state} while this one walked: ` +
          'that one stays the last complete snapshot.',
      );
  }

  record(): Record<string, unknown> {
    const { previous } = this.diff;
    const counts = this.counts();
    return {
      previous_snapshot: previous?.takenAt ?? null,
      kinds: this.kinds === undefined ? null : [...this.kinds],
      new: counts.new,
      changed: counts.changed,
      unchanged: counts.unchanged,
      snapshot_published: this.published ?? false,
    };
  }
}
