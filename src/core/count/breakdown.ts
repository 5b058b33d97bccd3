/**
 * A set broken down into segments (`count --by`). Country and employee range are filters of the
 * service: one query per segment counts its companies and contacts. Industry, co-used technology
 * and category are only in the rows: the set is walked and its companies counted per segment.
 * Contacts are not in company rows: a co-used technology is a filter too (the repeated technology
 * of contract row 36), so the segments shown are then counted by the service, one query each;
 * industry and category are not filters, so their contacts are not available, and said so.
 */
import { EMPLOYEE_RANGE_LABELS, serviceRange, type CompanyFilters } from '../companies/filters.js';
import { answerAll, refusesRepeatedTechnologies, serviceQueries, sizeFromAnswers, type SetSize } from './set-size.js';
import type { CompaniesMeta, CompanyQuery, CompanyRow, ProspectClient } from '../../api/index.js';

export const DIMENSIONS = ['country', 'employee_range', 'industry', 'technology', 'category'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

export interface Segment {
  value: string;
  companies: number;
  /**
   * undefined: not counted (industry and category, the "other" row of a technology breakdown, a
   * service that did not count).
   */
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

/** Dimensions whose segments the service can count (a segment is a filter): a walked one's contacts come from it. */
export type CountableDimension = 'country' | 'employee_range' | 'technology';

/** Why a walked dimension's segments have no contact count; undefined where the service counts them. */
export function segmentContactsUnavailable(dimension: Dimension): string | undefined {
  if (dimension === 'industry' || dimension === 'category')
    return `the service cannot filter companies by ${dimension}, and company rows carry no contacts`;
  return undefined;
}

/**
 * The contract's labels (row 5), within the --employee-range bands when given: the segments of
 * `--by employee_range`.
 */
export function employeeRangeLabels(filters: CompanyFilters): string[] {
  if (filters.employeeRanges.length === 0) return [...EMPLOYEE_RANGE_LABELS];
  const bands = filters.employeeRanges.map((range) => serviceRange(range).split('-').map(Number) as [number, number]);
  return EMPLOYEE_RANGE_LABELS.filter((label) => {
    const [low, high] = label.split('-').map(Number) as [number, number];
    return bands.some(([from, to]) => low >= from && high <= to);
  });
}

/** The set narrowed to one segment, as filters the service takes. */
function segmentFilters(filters: CompanyFilters, dimension: CountableDimension, value: string): CompanyFilters {
  if (dimension === 'country') return { ...filters, countries: [value] };
  if (dimension === 'employee_range') return { ...filters, employeeRanges: [value] };
  return { ...filters, technologies: [...filters.technologies, value] };
}

/**
 * Segments counted by the service, one query each (times the other any-of filters), at most
 * `concurrency` at once; undefined when the service did not count the segments (the caller walks).
 */
export async function breakdownByQueries(
  client: Pick<ProspectClient, 'companies'>,
  filters: CompanyFilters,
  dimension: CountableDimension,
  values: readonly string[],
  concurrency: number,
): Promise<Breakdown | undefined> {
  const narrowed = values.map((value) => segmentFilters(filters, dimension, value));
  const queries = narrowed.map(serviceQueries);
  let answers;
  try {
    answers = await answerAll(client, queries.flat(), concurrency);
  } catch (error) {
    if (refusesRepeatedTechnologies(error, narrowed[0] ?? filters)) return undefined;
    throw error;
  }
  const segments: Segment[] = [];
  let offset = 0;
  for (const [i, segment] of narrowed.entries()) {
    const size = sizeFromAnswers(segment, queries[i]!, answers.slice(offset, offset + queries[i]!.length));
    offset += queries[i]!.length;
    if (size === undefined) return undefined;
    if (size.companies > 0) segments.push({ value: values[i]!, companies: size.companies, contacts: size.contacts });
  }
  const contacts = segments.every((segment) => segment.contacts !== undefined)
    ? sum(segments.map((segment) => segment.contacts!))
    : undefined;
  const meta = answers.find((answer) => answer.kind === 'meta')?.meta;
  const total = { companies: sum(segments.map((segment) => segment.companies)), contacts };
  return {
    dimension,
    segments: sorted(segments),
    total,
    byService: true,
    overlapping: dimension === 'technology',
    meta,
    queries: queries.flat(),
  };
}

/**
 * A walked technology breakdown with the contacts of its first `top` segments (0: all) counted by
 * the service, one query each; the segments stay as walked where the service does not count them.
 */
export async function withTechnologyContacts(
  client: Pick<ProspectClient, 'companies'>,
  filters: CompanyFilters,
  walked: Breakdown,
  top: number,
  concurrency: number,
): Promise<Breakdown> {
  const shown = top > 0 ? walked.segments.slice(0, top) : walked.segments;
  const counted = await breakdownByQueries(
    client,
    filters,
    'technology',
    shown.map((segment) => segment.value),
    concurrency,
  );
  if (counted === undefined) return walked;
  const contacts = new Map(counted.segments.map((segment) => [segment.value, segment.contacts]));
  return {
    ...walked,
    segments: walked.segments.map((segment) => ({ ...segment, contacts: contacts.get(segment.value) })),
  };
}

/** The segments a company row is in, for a dimension read from rows. */
function segmentsOfRow(dimension: Dimension, row: CompanyRow, filters: CompanyFilters): string[] {
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
    if (companies > 0)
      rows.push({ value: 'other', companies, contacts: undefined, share: share(companies), other: true });
    return rows;
  }
  const companies = sum(rest.map((segment) => segment.companies));
  const contacts = rest.every((segment) => segment.contacts !== undefined)
    ? sum(rest.map((segment) => segment.contacts!))
    : undefined;
  rows.push({ value: 'other', companies, contacts, share: share(companies), other: true });
  return rows;
}

function sorted(segments: Segment[]): Segment[] {
  return segments.sort(
    (a, b) =>
      b.companies - a.companies ||
      (b.contacts ?? 0) - (a.contacts ?? 0) ||
      (a.value < b.value ? -1 : a.value > b.value ? 1 : 0),
  );
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
