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

/** A listing's diff, as a job uses it: in this thread (SeriesDiff) or on its own (diff-thread.ts). */
export interface ListingDiff {
  readonly counts: ChangeCounts;
  /** Companies this walk listed (before --exclude-domains): an empty listing with nothing gone matched nobody. */
  readonly listed: number;
  readonly previous: SnapshotInfo | undefined;
  /** The pending snapshot is a resumed run's: it has the pages that run walked before it stopped. */
  readonly resumed: boolean;
  /**
   * A page of the listing, each company compared with the previous snapshot and added to the pending
   * one; the rows of the kinds `written` holds (all without it), as written (most of a listing is
   * unchanged, and never built).
   */
  page(rows: readonly CompanyRow[], written?: ReadonlySet<ChangeRow['change']>): Promise<ChangeRow[]>;
  /** The companies of the previous snapshot this walk did not list, from disk; only once the walk is complete. */
  gone(): AsyncGenerator<ChangeRow[]>;
  publish(source: string | undefined): Promise<boolean>;
  abandon(): Promise<void>;
}

/** The diff against one series of snapshots, computed in this thread. */
export class SeriesDiff implements ListingDiff {
  readonly counts: ChangeCounts = { new: 0, changed: 0, gone: 0, unchanged: 0 };
  listed = 0;

  /**
   * `observe`: give each technology entry its observed dates (JSON and NDJSON show them; a CSV has
   * only names, and a walk of 700,000 companies need not copy every entry of every stack).
   */
  constructor(
    private readonly series: SnapshotSeries,
    private readonly observe = true,
  ) {}

  /** When the pending snapshot was taken: this walk's, or the resumed run's it carries on. */
  private get takenAt(): string {
    return this.series.takenAt;
  }

  get previous(): SnapshotInfo | undefined {
    return this.series.previous;
  }

  get resumed(): boolean {
    return this.series.resumed;
  }

  async page(rows: readonly CompanyRow[], written?: ReadonlySet<ChangeRow['change']>): Promise<ChangeRow[]> {
    const known = await this.series.lookup(rows.map((row) => row.domain));
    const out: ChangeRow[] = [];
    const changes: ChangeRow['change'][] = [];
    const pending = rows.map((row) => {
      const before = known.get(row.domain);
      const kept = this.kept(row, before);
      const { change, added, removed } = this.compare(row, kept.stack, before);
      changes.push(change);
      if (written?.has(change) ?? true) out.push(this.changeRow(row, { change, added, removed }, before));
      return this.pending(row, kept, change !== 'unchanged', before);
    });
    await this.series.add(pending);
    this.listed += rows.length;
    for (const change of changes) this.counts[change] += 1;
    return out;
  }

  /**
   * The row as stored, its digest, and its stack's: a row the previous snapshot has byte for byte (most,
   * from one crawl to the next) has that snapshot's stack digest, and a store that shares rows keeps it once.
   */
  private kept(row: CompanyRow, known: ObservedCompany | undefined): KeptRow {
    const json = JSON.stringify(row);
    const digest = rowDigest(json);
    const previous = known?.previous;
    if (previous?.rowDigest === digest && previous.stack !== undefined)
      return { json, digest, stack: previous.stack, sameRow: true };
    return { json, digest, stack: stackDigest(row.technologies.map((entry) => entry.t)), sameRow: false };
  }

  /** The company as this snapshot keeps it: once published, what the series has observed of it. */
  private pending(row: CompanyRow, kept: KeptRow, fresh: boolean, known: ObservedCompany | undefined): PendingCompany {
    const keeps = this.series.keepsObservations;
    const technologyFirstSeen = keeps ? { ...known?.technologyFirstSeen } : NO_DATES;
    if (keeps) for (const name of namesOf(row)) technologyFirstSeen[name] ??= this.takenAt;
    let names: string[] | undefined;
    return {
      domain: row.domain,
      // Sorted only for a store that keeps them (the team's): the local one has the row and the digest.
      get technologies() {
        return (names ??= namesOf(row));
      },
      row: kept.json,
      rowDigest: kept.digest,
      sameRow: kept.sameRow,
      firstSeen: known?.firstSeen ?? this.takenAt,
      technologyFirstSeen,
      stack: kept.stack,
      fresh,
    };
  }

  async *gone(): AsyncGenerator<ChangeRow[]> {
    const lastSeen = this.previous?.takenAt;
    for await (const page of this.goneCompanies()) yield page.map((company) => goneRow(company, lastSeen!));
  }

  /** The same, as stored: a thread sends these (strings) and the rows are built where they are written. */
  async *goneCompanies(): AsyncGenerator<GoneCompany[]> {
    for await (const page of this.series.gone()) {
      this.counts.gone += page.length;
      yield page.map(({ firstSeen, technologyFirstSeen, previous }) => ({
        firstSeen,
        technologyFirstSeen,
        row: previous!.row,
      }));
    }
  }

  publish(source: string | undefined): Promise<boolean> {
    return this.series.publish(source);
  }

  abandon(): Promise<void> {
    return this.series.abandon();
  }

  private compare(row: CompanyRow, stack: string, known: ObservedCompany | undefined): Comparison {
    const previous = known?.previous;
    if (previous === undefined) return NEW;
    // The same digest is the same stack: most companies, whose stacks are then neither read nor sorted.
    if (previous.stack === stack) return UNCHANGED;
    const before = previous.technologies;
    const names = namesOf(row);
    const beforeSet = new Set(before);
    const nowSet = new Set(names);
    const added = names.filter((name) => !beforeSet.has(name));
    const removed = before.filter((name) => !nowSet.has(name));
    return added.length + removed.length > 0 ? { change: 'changed', added, removed } : UNCHANGED;
  }

  private changeRow(row: CompanyRow, { change, added, removed }: Comparison, known: ObservedCompany | undefined) {
    return {
      change,
      technologies_added: [...added],
      technologies_removed: [...removed],
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
}

/** A company of the previous snapshot this walk did not list: its row's JSON, and when it was first seen. */
export interface GoneCompany {
  firstSeen: string;
  technologyFirstSeen: Record<string, string>;
  row: string;
}

/** A gone company: its row as the previous snapshot listed it, last seen then. */
export function goneRow(company: GoneCompany, lastSeen: string): ChangeRow {
  const row = JSON.parse(company.row) as CompanyRow;
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

interface Comparison {
  change: ChangeRow['change'];
  added: string[];
  removed: string[];
}

/** The first dates a store that derives them (the local one) is given: none. */
const NO_DATES: Record<string, string> = Object.freeze({});

// Shared by every new or unchanged company (a listing is mostly these): nothing writes to them.
const NEW: Comparison = Object.freeze({ change: 'new', added: [], removed: [] });
const UNCHANGED: Comparison = Object.freeze({ change: 'unchanged', added: [], removed: [] });

interface KeptRow {
  json: string;
  digest: string;
  stack: string;
  /** The previous snapshot has this very row. */
  sameRow: boolean;
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

/** A row's JSON as a digest: the same digest is the same row, and so the same stack. */
export function rowDigest(json: string): string {
  return createHash('sha1').update(json).digest('base64url');
}
