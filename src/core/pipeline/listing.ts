import type { CompanyRow, ProspectClient } from '../../api/index.js';
import { companyQueries, localRowFilter, type CompanyFilters } from '../companies/filters.js';
import { countSet, listedCompanies, type SetCount } from '../companies/set-count.js';
import type { SplitOptions } from '../companies/split.js';
import { checkLocalTechnologies, pageSizeForMax, walkCompanies } from '../companies/walk.js';
import type { Checkpoint, ListedChanges, PageEnd } from './state/checkpoint.js';

export interface CompanyItem {
  company: CompanyRow;
  /** Set on a chunk's last kept row: once it is written, the run can resume from these positions. */
  pageEnd?: PageEnd;
  /** How many companies the service lists for the queries (the sum of their meta.total), for the progress bar. */
  listingTotal?: number | undefined;
  /**
   * Companies left out by the run's `accept` (--exclude-domains) since the previous item, counted
   * when this one is written.
   */
  excluded?: number;
  /** Companies the filters applied here (--industry, --max-rank, …) left out since the previous item. */
  filtered?: number;
  /** Set on the item at which --max stopped a listing that had more companies: what the service counted of the set. */
  stoppedAtMax?: SetCount;
}

export interface ListingLimits {
  /** False for a company the run must leave out before its contacts are asked for (--exclude-domains). */
  accept?: (company: CompanyRow) => boolean;
  /** --max: companies this run may still list (the cap less those a resumed run already did). */
  max?: number;
  /** Rows per page the run asks for (--page-size), unless --max needs fewer. */
  pageSize?: number | undefined;
  /** Split a long listing into parts walked at once (companies/split.ts); its --max is `max`. */
  split?: SplitOptions;
  /**
   * The companies `accept` left out after the last one listed (the set's last pages, or all of it):
   * no item is left to carry them, so they are handed over here once the listing ends.
   */
  excludedAfterLast?: (excluded: number) => void;
  /** The same for the companies the filters applied here left out after the last one listed. */
  filteredAfterLast?: (filtered: number) => void;
  /**
   * --state: each page of the listing (after the filters applied here) kept, and with --changes compared
   * with the last complete snapshot; page() resolves to the companies of the kinds kept, before `accept`.
   */
  changes?: {
    page(rows: readonly CompanyRow[]): Promise<CompanyRow[]>;
    /** The companies by kind so far, the resumed run's earlier part included. */
    counts(): ListedChanges;
  };
}

/**
 * The companies a pipeline run still has to do, one at a time: every service query of the filters
 * merged (companies/walk.ts), from the checkpoint's positions, with the filters the service cannot
 * express applied. The first page's provenance goes into the checkpoint, so a resumed JSON document
 * ends exactly as an uninterrupted one; so do the parts of a split listing, so a resume walks them.
 */
export async function* companiesStillToDo(
  client: Pick<ProspectClient, 'companies'>,
  filters: CompanyFilters,
  checkpoint: Checkpoint,
  limits: ListingLimits = {},
): AsyncGenerator<CompanyItem> {
  if (checkpoint.listing_done) return;
  let left = limits.max ?? Infinity;
  if (left <= 0) return;
  await checkLocalTechnologies(client, filters);
  const keep = localRowFilter(filters);
  const walk = walkCompanies(client, companyQueries(filters), {
    positions: checkpoint.positions ?? undefined,
    partition: checkpoint.partition,
    split: limits.split && { ...limits.split, max: limits.max },
    pageSize: pageSizeForMax(limits.max, keep !== undefined || limits.accept !== undefined, limits.pageSize),
  });
  let excluded = 0;
  let filtered = 0;
  for await (const chunk of walk.chunks) {
    // The chunk's positions are of these parts: both are committed together.
    if (walk.partition !== undefined) checkpoint.partition = walk.partition;
    const meta = walk.answers.find((answer) => answer?.kind === 'meta')?.meta;
    if (meta) checkpoint.meta ??= { source: meta.source, scope: meta.scope };
    const matching = keep ? chunk.rows.filter(keep) : chunk.rows;
    filtered += chunk.rows.length - matching.length;
    const listed = limits.changes ? await limits.changes.page(matching) : matching;
    let rows = limits.accept ? listed.filter(limits.accept) : listed;
    excluded += listed.length - rows.length;
    const capped = rows.length >= left;
    const stopped = capped && (rows.length > left || !chunk.last);
    if (capped) rows = rows.slice(0, left);
    left -= rows.length;
    // A listing stopped by --max is done: a resume finishes the output instead of listing on.
    const positions = capped ? chunk.positions.map((position) => ({ ...position, done: true })) : chunk.positions;
    const listingTotal = listedCompanies(walk.answers);
    for (const [index, company] of rows.entries()) {
      if (index < rows.length - 1) {
        yield { company, listingTotal };
        continue;
      }
      yield {
        company,
        // The counts as of this chunk: an item is written after the walk may have read on.
        pageEnd: { positions, ...(limits.changes ? { changes: limits.changes.counts() } : {}) },
        listingTotal,
        excluded,
        filtered,
        ...(stopped ? { stoppedAtMax: countSet(filters, walk.answers) } : {}),
      };
      excluded = 0;
      filtered = 0;
    }
    if (capped) return;
  }
  if (excluded > 0) limits.excludedAfterLast?.(excluded);
  if (filtered > 0) limits.filteredAfterLast?.(filtered);
}
