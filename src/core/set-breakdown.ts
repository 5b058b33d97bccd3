/**
 * A set broken down into segments (`count --by`). Country and employee range are filters of the
 * service: one query per segment counts its companies and contacts. Industry, co-used technology
 * and category are only in the rows: the set is walked and its companies counted per segment
 * (contacts are not in company rows, so those segments have no contact count).
 */
import type { CompanyFilters } from './company-filters.js';
import { answerAll, refusesRepeatedTechnologies, serviceQueries, sizeFromAnswers, type SetSize } from './set-size.js';
import type { CompaniesMeta, CompanyQuery, CompanyRow, ProspectClient } from '../api/index.js';

export const DIMENSIONS = ['country', 'employee_range', 'industry', 'technology', 'category'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** The contract's employee-range labels (row 5): the segments of `--by employee_range`. */
export const EMPLOYEE_RANGE_LABELS = ['1-10', '11-50', '51-200', '201-500', '501-1000', '1001-5000', '5001-10000', '10001-100000'] as const;

export interface Segment {
  value: string;
  companies: number;
  /** undefined: not counted (a walked dimension). */
  contacts: number | undefined;
}

export interface Breakdown {
  dimension: Dimension;
  /** Every segment with a company, most companies first. */
  segments: Segment[];
  /** The set itself. */
  total: { companies: number; contacts: number | undefined };
  /** Counted by the service, one query per segment (false: by walking the set). */
  byService: boolean;
  /** A company can be in several segments (technology, category): shares do not add up to 100%. */
  overlapping: boolean;
  /** Walked overlapping dimensions: each company's segments, for the "other" row of --top. */
  memberships?: string[][];
  /** Query dimensions: the service's provenance and the queries sent. */
  meta?: CompaniesMeta | undefined;
  queries?: CompanyQuery[];
}

export function isQueryDimension(dimension: Dimension): dimension is 'country' | 'employee_range' {
  return dimension === 'country' || dimension === 'employee_range';
}

/**
 * Segments of a query dimension, one service query each (times the other any-of filters), at most
 * `concurrency` at once; undefined when the service did not count the segments (the caller walks).
 */
export async function breakdownByQueries(
  client: Pick<ProspectClient, 'companies'>,
  filters: CompanyFilters,
  dimension: 'country' | 'employee_range',
  values: readonly string[],
  concurrency: number,
): Promise<Breakdown | undefined> {
  const segmentFilters = values.map((value) => (dimension === 'country' ? { ...filters, countries: [value] } : { ...filters, employeeRanges: [value] }));
  const queries = segmentFilters.map(serviceQueries);
  let answers;
  try {
    answers = await answerAll(client, queries.flat(), concurrency);
  } catch (error) {
    if (refusesRepeatedTechnologies(error, filters)) return undefined;
    throw error;
  }
  const segments: Segment[] = [];
  let offset = 0;
  for (const [i, segment] of segmentFilters.entries()) {
    const size = sizeFromAnswers(segment, queries[i]!, answers.slice(offset, offset + queries[i]!.length));
    offset += queries[i]!.length;
    if (size === undefined) return undefined;
    if (size.companies > 0) segments.push({ value: values[i]!, companies: size.companies, contacts: size.contacts });
  }
  const contacts = segments.every((segment) => segment.contacts !== undefined) ? sum(segments.map((segment) => segment.contacts!)) : undefined;
  const meta = answers.find((answer) => answer.kind === 'meta')?.meta;
  const total = { companies: sum(segments.map((segment) => segment.companies)), contacts };
  return { dimension, segments: sorted(segments), total, byService: true, overlapping: false, meta, queries: queries.flat() };
}

/** The segments a company row is in, for a dimension read from rows. */
export function segmentsOfRow(dimension: Dimension, row: CompanyRow, filters: CompanyFilters): string[] {
  switch (dimension) {
    case 'country':
      return [row.country ?? 'unknown'];
    case 'employee_range':
      return [row.employee_range ?? 'unknown'];
    case 'industry':
      return [row.industry ?? 'unknown'];
    case 'technology': {
      // "What else do they run": the filter's own technologies are in every row, so they are left out.
      const own = new Set(filters.technologies.map((name) => name.trim().toLowerCase()));
      return unique((row.technologies ?? []).map((entry) => entry.t).filter((name) => !own.has(name.toLowerCase())));
    }
    case 'category':
      return unique((row.technologies ?? []).map((entry) => entry.c ?? 'unknown'));
  }
}

/** Counts walked rows per segment; `finish` gives the breakdown once the walk has ended. */
export function rowTally(dimension: Dimension, filters: CompanyFilters) {
  const counts = new Map<string, number>();
  const overlapping = dimension === 'technology' || dimension === 'category';
  const memberships: string[][] = [];
  return {
    add(row: CompanyRow): void {
      const values = segmentsOfRow(dimension, row, filters);
      for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
      if (overlapping) memberships.push(values);
    },
    finish(size: SetSize): Breakdown {
      const segments = [...counts].map(([value, companies]) => ({ value, companies, contacts: undefined }));
      return {
        dimension,
        segments: sorted(segments),
        total: { companies: size.companies, contacts: size.contacts },
        byService: false,
        overlapping,
        ...(overlapping ? { memberships } : {}),
      };
    },
  };
}

export interface BreakdownRow extends Segment {
  /** Of the set's companies, 0 to 1. */
  share: number;
  /** The "other" row of --top: every segment after the first N. */
  other?: boolean;
}

/**
 * The first `top` segments (0: all), then an "other" row for the rest: their sums, or, where a
 * company can be in several segments, the companies in none of the first N.
 */
export function breakdownRows(breakdown: Breakdown, top: number): BreakdownRow[] {
  const share = (companies: number) => (breakdown.total.companies === 0 ? 0 : companies / breakdown.total.companies);
  const shown = top > 0 ? breakdown.segments.slice(0, top) : breakdown.segments;
  const rows: BreakdownRow[] = shown.map((segment) => ({ ...segment, share: share(segment.companies) }));
  const rest = breakdown.segments.slice(shown.length);
  if (rest.length === 0) return rows;
  if (breakdown.memberships) {
    const named = new Set(shown.map((segment) => segment.value));
    const companies = breakdown.memberships.filter((values) => !values.some((value) => named.has(value))).length;
    if (companies > 0) rows.push({ value: 'other', companies, contacts: undefined, share: share(companies), other: true });
    return rows;
  }
  const companies = sum(rest.map((segment) => segment.companies));
  const contacts = rest.every((segment) => segment.contacts !== undefined) ? sum(rest.map((segment) => segment.contacts!)) : undefined;
  rows.push({ value: 'other', companies, contacts, share: share(companies), other: true });
  return rows;
}

function sorted(segments: Segment[]): Segment[] {
  return segments.sort((a, b) => b.companies - a.companies || (b.contacts ?? 0) - (a.contacts ?? 0) || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
