/**
 * A listing compared with the last complete snapshot of the same filters, company by company, as its
 * pages come: each company carries its whole stack both times, so what it added and removed is exact.
 * The walk's own snapshot is written as it goes and published only once the walk is complete.
 */
import { createHash } from 'node:crypto';
import type { CompanyRow } from '../../api/index.js';
import type { ObservedCompany, PendingCompany, SnapshotInfo, SnapshotSeries } from '../state-store/types.js';

export const CHANGE_KINDS = ['new', 'changed', 'gone'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** A technology entry as written with --state: the service's, with prospect's own observation of it. */
type ObservedTechnology = CompanyRow['technologies'][number] & {
  observed_first_seen: string;
  observed_last_seen: string;
};

/** A company as `companies --changes` writes it. */
export type ChangeRow = CompanyRow & {
  change: ChangeKind | 'unchanged';
  technologies_added: string[];
  technologies_removed: string[];
  technologies: ObservedTechnology[];
  first_seen: string;
  previous_snapshot: string | null;
};

/** The counts of a diff, for the run's record and `count --by change`. */
export interface ChangeCounts {
  new: number;
  changed: number;
  gone: number;
  unchanged: number;
}

export class ListingDiff {
  readonly counts: ChangeCounts = { new: 0, changed: 0, gone: 0, unchanged: 0 };
  /** Companies this walk listed (before --exclude-domains): an empty listing with nothing gone matched nobody. */
  listed = 0;

  /**
   * `observe`: give each technology entry its observed dates (JSON and NDJSON show them; a CSV has
   * only names, and a walk of 700,000 companies need not copy every entry of every stack).
   */
  constructor(
    private readonly series: SnapshotSeries,
    private readonly takenAt: string,
    private readonly observe = true,
  ) {}

  get previous(): SnapshotInfo | undefined {
    return this.series.previous;
  }

  /** The pending snapshot is a resumed run's: it has the pages that run walked before it stopped. */
  get resumed(): boolean {
    return this.series.resumed;
  }

  /** A page of the listing, each company compared with the previous snapshot, and added to the pending one. */
  async page(rows: readonly CompanyRow[]): Promise<ChangeRow[]> {
    const known = await this.series.lookup(rows.map((row) => row.domain));
    const stacks = rows.map((row) => stackDigest(row.technologies.map((entry) => entry.t)));
    const compared = rows.map((row, index) => this.compare(row, stacks[index]!, known.get(row.domain)));
    await this.series.add(
      rows.map((row, index) =>
        this.pending(row, stacks[index]!, compared[index]!.change !== 'unchanged', known.get(row.domain)),
      ),
    );
    this.listed += rows.length;
    for (const row of compared) this.counts[row.change] += 1;
    return compared;
  }

  /** The company as this snapshot keeps it: once published, what the series has observed of it. */
  private pending(row: CompanyRow, stack: string, fresh: boolean, known: ObservedCompany | undefined): PendingCompany {
    const keeps = this.series.keepsObservations;
    const technologyFirstSeen = keeps ? { ...known?.technologyFirstSeen } : {};
    if (keeps) for (const name of namesOf(row)) technologyFirstSeen[name] ??= this.takenAt;
    let names: string[] | undefined;
    return {
      domain: row.domain,
      // Sorted only for a store that keeps them (the team's): the local one has the row and the digest.
      get technologies() {
        return (names ??= namesOf(row));
      },
      row: JSON.stringify(row),
      firstSeen: known?.firstSeen ?? this.takenAt,
      technologyFirstSeen,
      stack,
      fresh,
    };
  }

  /** The companies of the previous snapshot this walk did not list, from disk; only once the walk is complete. */
  async *gone(): AsyncGenerator<ChangeRow[]> {
    for await (const page of this.series.gone()) {
      this.counts.gone += page.length;
      yield page.map((company) => this.goneRow(company));
    }
  }

  publish(source: string | undefined): Promise<boolean> {
    return this.series.publish(source);
  }

  abandon(): Promise<void> {
    return this.series.abandon();
  }

  private compare(row: CompanyRow, stack: string, known: ObservedCompany | undefined): ChangeRow {
    const previous = known?.previous;
    // The same digest is the same stack: most companies, whose stacks are then neither read nor sorted.
    const before = previous === undefined || previous.stack === stack ? undefined : previous.technologies;
    const names = before === undefined ? [] : namesOf(row);
    const beforeSet = new Set(before);
    const nowSet = new Set(names);
    const added = names.filter((name) => !beforeSet.has(name));
    const removed = before === undefined ? [] : before.filter((name) => !nowSet.has(name));
    const change = previous === undefined ? 'new' : added.length + removed.length > 0 ? 'changed' : 'unchanged';
    return {
      change,
      technologies_added: added,
      technologies_removed: removed,
      ...row,
      technologies: this.observe
        ? row.technologies.map((entry) => ({
            ...entry,
            observed_first_seen: known?.technologyFirstSeen[entry.t] ?? this.takenAt,
            observed_last_seen: this.takenAt,
          }))
        : (row.technologies as ObservedTechnology[]),
      first_seen: known?.firstSeen ?? this.takenAt,
      previous_snapshot: this.previous?.takenAt ?? null,
    };
  }

  /** A gone company: its row as the previous snapshot listed it, last seen then. */
  private goneRow(company: ObservedCompany): ChangeRow {
    const row = JSON.parse(company.previous!.row) as CompanyRow;
    const lastSeen = this.previous!.takenAt;
    return {
      change: 'gone',
      technologies_added: [],
      technologies_removed: [],
      ...row,
      technologies: row.technologies.map((entry) => ({
        ...entry,
        observed_first_seen: company.technologyFirstSeen[entry.t] ?? lastSeen,
        observed_last_seen: lastSeen,
      })),
      first_seen: company.firstSeen,
      previous_snapshot: lastSeen,
    };
  }
}

/** The technologies' names of a row, sorted and once each: the stack two snapshots compare. */
export function namesOf(row: Pick<CompanyRow, 'technologies'>): string[] {
  return [...new Set(row.technologies.map((entry) => entry.t))].sort();
}

/**
 * A stack's technology names, in the order given, as a digest: the same digest is the same stack.
 * Not sorted first: a stack listed in another order only differs in digest, and is then compared name by name.
 */
export function stackDigest(names: readonly string[]): string {
  return createHash('sha1').update(JSON.stringify(names)).digest('base64url');
}
