/**
 * A long listing split into parts walked at once (contract row 37). One service query becomes 2^k
 * disjoint queries: the set with and without each of k technologies that its rows run (the
 * repeated `technology` / `not_technology` of contract row 36). Their walks are merged back into
 * the service's order (companies/merge.ts), so the output is the single cursor's, byte for byte.
 *
 * The technologies are chosen on a sample, the set's first page: those whose presence splits its
 * rows most evenly, so the parts are few and about equal and the merge holds about two pages per
 * part. A split is used only once proven complete from the parts' first pages: each part says it
 * applied every technology it sent (`meta.technologies`), and the parts' `meta.total` add up to the
 * set's. A company the parts missed would otherwise be lost without a word.
 *
 * This file decides; companies/walk.ts asks the service and walks.
 */
import { z } from 'zod';
import {
  BadRequestError,
  UnanswerableError,
  type CompaniesMeta,
  type CompanyQuery,
  type CompanyRow,
} from '../../api/index.js';
import { formatCount } from '../../ui/format-count.js';
import type { Reporter } from '../../ui/reporter.js';
import { isRecord } from '../../util/is-record.js';
import type { CompanyFilters } from './filters.js';
import type { QueryAnswer } from './query-answer.js';

/** At most 2^3 = 8 parts: each part holds a page or two in the merge, and asks its first page of its own. */
const MAX_SPLIT_LEVELS = 3;

/**
 * A listing of at most this many pages is walked with one cursor: a split first costs a round trip
 * (the sample), so it pays only when the parts save several.
 */
const MAX_PAGES_UNSPLIT = 4;

export interface SplitOptions {
  /** --concurrency: service calls in flight at once; the parts are at most as many. */
  concurrency: number;
  /** The technologies the user named, of either kind: never a splitting one. */
  avoid: readonly string[];
  /** --max: rows the run may still write; a listing it cuts short is split only when the cut spans several pages. */
  max?: number | undefined;
  /** Why the listing is or is not split, for --verbose; `fallback` when a split was tried and dropped. */
  explain?: ((line: string, fallback: boolean) => void) | undefined;
}

/**
 * What a job that walks a filter set gives for a split: its --concurrency, the user's technologies
 * (none splits the set), its --max; the split said as information, a dropped one as a warning (both
 * on a terminal or with --verbose).
 */
export function splitOptions(
  reporter: Pick<Reporter, 'info' | 'warn'>,
  filters: CompanyFilters,
  concurrency: number,
  max?: number,
): SplitOptions {
  return {
    concurrency,
    avoid: [...filters.technologies, ...filters.notTechnologies],
    ...(max === undefined ? {} : { max }),
    explain: (line, fallback) => (fallback ? reporter.warn(line) : reporter.info(line)),
  };
}

/** The parts a listing was split into, as a checkpoint keeps them, with the set's own counts. */
export const partitionSchema = z.object({
  queries: z
    .array(
      z.object({
        technology: z.string().min(1),
        notTechnology: z.string().min(1).optional(),
        moreTechnologies: z.array(z.string().min(1)).optional(),
        moreNotTechnologies: z.array(z.string().min(1)).optional(),
        employeeRange: z.string().optional(),
        country: z.string().optional(),
      }),
    )
    .min(2),
  total: z.number().int().nonnegative(),
  contact_count: z.number().int().nonnegative().optional(),
});
export type Partition = z.output<typeof partitionSchema>;

/** How many technologies split the listing: the parts (2^levels) are never more than the calls in flight. */
export function splitLevels(concurrency: number): number {
  let levels = 0;
  while (levels < MAX_SPLIT_LEVELS && 2 ** (levels + 1) <= concurrency) levels += 1;
  return levels;
}

/** Whether a listing of `total` rows, in pages of `pageRows`, is worth splitting (before choosing how). */
export function worthSplitting(total: number, pageRows: number, max: number | undefined): boolean {
  const rows = Math.min(total, max ?? Infinity);
  return pageRows > 0 && rows > MAX_PAGES_UNSPLIT * pageRows;
}

/**
 * Up to `levels` technologies whose presence splits the sample's rows into the most even parts,
 * chosen one at a time: each makes the largest part of the sample smaller, or it is not taken.
 * None of `avoid`. Deterministic: ties go to the name first in code-point order.
 */
export function chooseSplitters(rows: readonly CompanyRow[], levels: number, avoid: readonly string[]): string[] {
  const avoided = new Set(avoid.map(lower));
  const rowsOf = new Map<string, { name: string; rows: number[] }>();
  rows.forEach((row, index) => {
    for (const entry of row.technologies) {
      const key = lower(entry.t);
      if (key === '' || avoided.has(key)) continue;
      let technology = rowsOf.get(key);
      if (technology === undefined) rowsOf.set(key, (technology = { name: entry.t.trim(), rows: [] }));
      if (technology.rows.at(-1) !== index) technology.rows.push(index);
    }
  });
  const candidates = [...rowsOf.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // The part of the sample each row falls in so far: bit i set when it runs the i-th technology chosen.
  const partOf = new Uint8Array(rows.length);
  const chosen: typeof candidates = [];
  let largest = rows.length;
  for (let level = 0; level < levels; level++) {
    const sizes = new Array<number>(2 ** level).fill(0);
    for (const part of partOf) sizes[part]! += 1;
    let best: (typeof candidates)[number] | undefined;
    let bestLargest = largest;
    for (const candidate of candidates) {
      if (chosen.includes(candidate)) continue;
      const running = new Array<number>(sizes.length).fill(0);
      for (const row of candidate.rows) running[partOf[row]!]! += 1;
      let worst = 0;
      for (const [part, size] of sizes.entries()) worst = Math.max(worst, running[part]!, size - running[part]!);
      if (worst < bestLargest) {
        best = candidate;
        bestLargest = worst;
      }
    }
    if (best === undefined) break;
    chosen.push(best);
    for (const row of best.rows) partOf[row]! |= 1 << level;
    largest = bestLargest;
  }
  return chosen.map((technology) => technology.name);
}

/**
 * The part queries: the listing's query with each splitting technology either required or
 * excluded, every combination once. Part `p` requires the i-th technology when bit i of p is set.
 */
export function partQueries(base: CompanyQuery, splitters: readonly string[]): CompanyQuery[] {
  return Array.from({ length: 2 ** splitters.length }, (_, part) => {
    const required = splitters.filter((_, i) => (part & (1 << i)) !== 0);
    const excluded = splitters.filter((_, i) => (part & (1 << i)) === 0);
    const moreTechnologies = [...(base.moreTechnologies ?? []), ...required];
    const [notTechnology, ...moreNotTechnologies] = [
      ...(base.notTechnology === undefined ? [] : [base.notTechnology]),
      ...(base.moreNotTechnologies ?? []),
      ...excluded,
    ];
    return {
      technology: base.technology,
      ...(notTechnology === undefined ? {} : { notTechnology }),
      ...(moreTechnologies.length > 0 ? { moreTechnologies } : {}),
      ...(moreNotTechnologies.length > 0 ? { moreNotTechnologies } : {}),
      ...(base.employeeRange === undefined ? {} : { employeeRange: base.employeeRange }),
      ...(base.country === undefined ? {} : { country: base.country }),
    };
  });
}

/**
 * Whether the service answered a query as it was sent (contract row 36): with more than one
 * technology of a kind, `meta.technologies` must name exactly those sent (in any case); with one of
 * each it may be absent, but if present it must name them too. A service that ignores a repeated
 * parameter, or applies only some, counts another set than the one asked.
 */
export function appliedAsSent(query: CompanyQuery, meta: CompaniesMeta): boolean {
  const allOf = [query.technology, ...(query.moreTechnologies ?? [])];
  const noneOf = [
    ...(query.notTechnology === undefined ? [] : [query.notTechnology]),
    ...(query.moreNotTechnologies ?? []),
  ];
  const echoed = meta['technologies'];
  if (echoed === undefined) return allOf.length === 1 && noneOf.length <= 1;
  return isRecord(echoed) && sameNames(echoed['all_of'], allOf) && sameNames(echoed['none_of'], noneOf);
}

export type SplitProof = { complete: true } | { complete: false; why: string };

/**
 * Whether the parts are the set: each applied what it sent, and their counts add up to the set's
 * (a part that matches nobody counts 0). Only then does their merge list every company once.
 */
export function proveSplit(
  whole: CompaniesMeta,
  parts: readonly CompanyQuery[],
  answers: ReadonlyArray<QueryAnswer | undefined>,
): SplitProof {
  if (whole.total === undefined) return { complete: false, why: 'the service does not count the set (meta.total)' };
  const counts: number[] = [];
  for (const [i, part] of parts.entries()) {
    const answer = answers[i];
    if (answer === undefined) return { complete: false, why: `part ${i + 1} of ${parts.length} was not answered` };
    if (answer.kind === 'no_match') {
      counts.push(0);
      continue;
    }
    if (!appliedAsSent(part, answer.meta)) {
      return {
        complete: false,
        why:
          `the service did not say it applied every technology of part ${i + 1} of ${parts.length} ` +
          '(meta.technologies, contract row 36)',
      };
    }
    if (answer.meta.total === undefined)
      return { complete: false, why: `the service did not count part ${i + 1} of ${parts.length} (meta.total)` };
    counts.push(answer.meta.total);
  }
  const sum = counts.reduce((total, count) => total + count, 0);
  if (sum !== whole.total)
    return {
      complete: false,
      why: `its ${parts.length} parts count ${formatCount(sum)} companies, not the set's ${formatCount(whole.total)}`,
    };
  return { complete: true };
}

/**
 * A part query the service will not answer as asked (400 for a repeated parameter, a 422 other than
 * no_match): walk one cursor instead.
 */
export function refusedPart(error: unknown): error is BadRequestError | UnanswerableError {
  return error instanceof BadRequestError || error instanceof UnanswerableError;
}

/** "with and without Google Analytics, MySQL and PHP": the split in words. */
export function describeSplit(splitters: readonly string[]): string {
  const names = splitters.length === 1 ? splitters[0] : `${splitters.slice(0, -1).join(', ')} and ${splitters.at(-1)}`;
  return `with and without ${names}`;
}

function sameNames(echoed: unknown, sent: readonly string[]): boolean {
  if (!Array.isArray(echoed)) return false;
  const a = new Set(echoed.map((name) => lower(String(name))));
  const b = new Set(sent.map(lower));
  return a.size === b.size && [...b].every((name) => a.has(name));
}

function lower(name: string): string {
  return name.trim().toLowerCase();
}
