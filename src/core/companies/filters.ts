import { z } from 'zod';
import type { CompanyQuery, CompanyRow } from '../../api/index.js';
import { UsageError } from '../../exit-codes.js';
import { COMPANY_FILTER_FLAGS } from '../../options/command-flags.js';
import { flagShape } from '../shared/flags.js';
import { industryLabels } from './industries.js';
import { formatCount } from '../../ui/format-count.js';

/**
 * The company filters `companies` and `pipeline` share: the flags as commander gives them (the
 * input type), and the filters as the jobs name them (the output type). Technologies are all-of:
 * the service takes one of each kind, the rest is checked here on each row's stack. Employee ranges
 * and countries are any-of (a company has one of each): the service takes one value per parameter,
 * so the set is walked as one service query per combination (companyQueries) and merged. The
 * service takes no industry or rank (contract row 38): those are checked here on each row too.
 */
export const companyFiltersSchema = z
  .object(flagShape(COMPANY_FILTER_FLAGS))
  .transform(({ technology, notTechnology, employeeRange, country, industry, maxRank }) => ({
    technologies: technology,
    notTechnologies: notTechnology,
    // `--employee-range 1-10,51-200` is a list too; a country name may itself hold a comma.
    employeeRanges: unique(employeeRange.flatMap((value) => value.split(',')).map((value) => value.trim())),
    countries: unique(country.map((value) => value.trim())),
    industries: unique(industry.map((value) => value.trim().toLowerCase().replace(/\s+/g, ' '))),
    maxRank,
  }));
type CompanyFilterFlags = z.input<typeof companyFiltersSchema>;
export type CompanyFilters = z.output<typeof companyFiltersSchema>;

/** A command's flag schema with the company filter flags in it; its output holds them as `filters`. */
export function withCompanyFilters<Shape extends z.ZodRawShape>(shape: Shape) {
  return z.object({ ...companyFiltersSchema.in.shape, ...shape }).transform((flags) => {
    const { technology, notTechnology, employeeRange, country, industry, maxRank, ...rest } =
      flags as CompanyFilterFlags & Omit<z.output<z.ZodObject<Shape>>, keyof CompanyFilterFlags>;
    const given = { technology, notTechnology, employeeRange, country, industry, maxRank };
    return { ...rest, filters: companyFiltersSchema.parse(given) };
  });
}

/**
 * The contract's employee-range labels (row 5): the bands --employee-range selects from, and the
 * segments of `--by employee_range`.
 */
export const EMPLOYEE_RANGE_LABELS = [
  '1-10',
  '11-50',
  '51-200',
  '201-500',
  '501-1000',
  '1001-5000',
  '5001-10000',
  '10001-100000',
] as const;

const CLOSED_RANGE = /^(\d{1,9})-(\d{1,9})$/;
const OPEN_RANGE = /^(\d{1,9})\+$/;
/**
 * An open band (`500+`) is asked as a closed one up to the high bound of the contract's largest label
 * (`10001-100000`, contract row 5): every label from the low bound up lies inside it, and the
 * service's messages read as the labels do.
 */
const LARGEST_LABEL_HIGH = 100_000;

/** Every check of the filters that needs no call; throws a UsageError (exit 2) before any. */
export function validateCompanyFilters(filters: CompanyFilters): void {
  const clean = (names: string[]) => names.map((name) => name.trim());
  if (clean(filters.technologies).filter(Boolean).length === 0) {
    throw new UsageError('--technology is required (for example --technology Shopify).');
  }
  if ([...clean(filters.technologies), ...clean(filters.notTechnologies)].some((name) => name === '')) {
    throw new UsageError('a technology name cannot be empty.');
  }
  const both = clean(filters.technologies).filter((name) =>
    clean(filters.notTechnologies).some((other) => other.toLowerCase() === name.toLowerCase()),
  );
  if (both.length > 0)
    throw new UsageError(`"${both[0]}" is both a --technology and a --not-technology: nothing can match.`);
  for (const range of filters.employeeRanges) refuseCutBands(serviceRange(range), range);
  if (filters.countries.some((country) => country === '')) throw new UsageError('--country cannot be empty.');
  industryLabels(filters.industries);
}

/**
 * A range whose bound falls inside one of the service's bands (`5-50` in 1-10) would silently mean
 * less (11-50): the service matches the bands that lie inside it. Refused, naming both readings. A
 * range inside one band (`2-5`) covers none; the service's answer says so, with suggestions.
 */
function refuseCutBands(asked: string, given: string): void {
  const [low, high] = asked.split('-').map(Number) as [number, number];
  const bands = EMPLOYEE_RANGE_LABELS.map((label) => label.split('-').map(Number) as [number, number]);
  const inside = bands.filter(([from, to]) => from >= low && to <= high);
  const cut = bands.filter(([from, to]) => (from < low && low <= to) || (from <= high && high < to));
  if (inside.length === 0 || cut.length === 0) return;
  const wider = [Math.min(low, ...cut.map(([from]) => from)), Math.max(high, ...cut.map(([, to]) => to))];
  const narrower = `${inside[0]![0]}-${inside.at(-1)![1]}`;
  throw new UsageError(
    `--employee-range ${given} cuts the ${cut.map((band) => band.join('-')).join(' and ')} band: the service ` +
      `counts employees in bands (${EMPLOYEE_RANGE_LABELS.slice(0, 3).join(', ')}, …) and matches those inside ` +
      `the range, so it would mean ${narrower}.`,
    `Use ${wider.join('-')} (the whole band) or ${narrower}.`,
  );
}

/** `11-500` as it is, `500+` as a closed range the service reads; a UsageError for anything else. */
export function serviceRange(range: string): string {
  const open = OPEN_RANGE.exec(range);
  if (open) return `${Number(open[1])}-${Math.max(Number(open[1]), LARGEST_LABEL_HIGH)}`;
  const closed = CLOSED_RANGE.exec(range);
  if (!closed || Number(closed[1]) > Number(closed[2])) {
    throw new UsageError(
      `--employee-range must look like 11-500 (low-high) or 500+ (500 and more), not "${range}".`,
      'Give several as a list (1-10,51-200) or repeat the flag: a company in any of them matches.',
    );
  }
  return range;
}

/**
 * The filters with each country as the service names it (`USA`, `us`, `United States` →
 * `united states`), duplicates dropped. The countries library is loaded only when there is a country.
 */
export async function normalizeCountries(filters: CompanyFilters): Promise<CompanyFilters> {
  if (filters.countries.length === 0) return filters;
  const { normalizeCountry } = await import('./countries.js');
  return { ...filters, countries: unique(filters.countries.map(normalizeCountry)) };
}

/**
 * The service queries whose union is the set: one per country and employee range (the cross product),
 * each with the first technology of each kind.
 */
export function companyQueries(filters: CompanyFilters): CompanyQuery[] {
  const base = { technology: filters.technologies[0]!.trim(), notTechnology: filters.notTechnologies[0]?.trim() };
  const ranges: Array<string | undefined> =
    filters.employeeRanges.length > 0 ? filters.employeeRanges.map(serviceRange) : [undefined];
  const countries: Array<string | undefined> =
    filters.countries.length > 0 ? filters.countries.map((country) => country.toLowerCase()) : [undefined];
  return countries.flatMap((country) => ranges.map((employeeRange) => ({ ...base, employeeRange, country })));
}

/**
 * Whether no company can be in two of the queries: countries are distinct, and two employee ranges
 * that do not overlap share no label (a label lies inside a range). Their counts then add up.
 */
export function queriesAreDisjoint(filters: CompanyFilters): boolean {
  const bounds = filters.employeeRanges
    .map((range) => serviceRange(range).split('-').map(Number) as [number, number])
    .sort((a, b) => a[0] - b[0]);
  return bounds.every((range, i) => i === 0 || range[0] > bounds[i - 1]![1]);
}

/** The technologies checked here rather than by the service (all but the first of each kind). */
export function localTechnologies(filters: CompanyFilters): { required: string[]; excluded: string[] } {
  return {
    required: filters.technologies.slice(1).map((name) => name.trim()),
    excluded: filters.notTechnologies.slice(1).map((name) => name.trim()),
  };
}

/**
 * The filters the service cannot express, applied to each row: the technologies after the first on
 * its whole stack, the industries (any of them) on its label, --max-rank on its crux_rank.
 */
export function localRowFilter(filters: CompanyFilters): ((row: CompanyRow) => boolean) | undefined {
  const local = localTechnologies(filters);
  const required = local.required.map(lower);
  const excluded = local.excluded.map(lower);
  const industries = new Set(filters.industries);
  const { maxRank } = filters;
  if (required.length + excluded.length + industries.size === 0 && maxRank === undefined) return undefined;
  return (row) => {
    if (maxRank !== undefined && !(row.crux_rank <= maxRank)) return false;
    if (industries.size > 0 && !industries.has(lower(row.industry ?? ''))) return false;
    if (required.length + excluded.length === 0) return true;
    const stack = new Set((row.technologies ?? []).map((entry) => lower(entry.t)));
    return required.every((name) => stack.has(name)) && !excluded.some((name) => stack.has(name));
  };
}

/** Whether a filter only a row can answer is set (industry, rank): the service's counts are then of a wider set. */
export function filtersRows(filters: CompanyFilters): boolean {
  return filters.industries.length > 0 || filters.maxRank !== undefined;
}

/**
 * The filters applied here as a summary names them: "WooCommerce", "not Klaviyo", "industry retail",
 * "crux_rank ≤ 10,000".
 */
export function locallyApplied(filters: CompanyFilters): string[] {
  const local = localTechnologies(filters);
  return [
    ...local.required,
    ...local.excluded.map((name) => `not ${name}`),
    ...(filters.industries.length > 0 ? [`industry ${filters.industries.join(' or ')}`] : []),
    ...(filters.maxRank !== undefined ? [`crux_rank ≤ ${formatCount(filters.maxRank)}`] : []),
  ];
}

export function describeFilters(filters: CompanyFilters): string {
  const parts = [
    ...filters.technologies.map((name) => `runs ${name}`),
    ...filters.notTechnologies.map((name) => `not ${name}`),
    ...(filters.employeeRanges.length > 0 ? [`${filters.employeeRanges.join(' or ')} employees`] : []),
    ...(filters.countries.length > 0 ? [`in ${filters.countries.join(' or ')}`] : []),
    ...(filters.industries.length > 0 ? [`industry ${filters.industries.join(' or ')}`] : []),
    ...(filters.maxRank !== undefined ? [`crux_rank ≤ ${formatCount(filters.maxRank)}`] : []),
  ];
  return parts.join(', ');
}

/**
 * The filters as the sidecar and the checkpoint's fingerprint record them: under the names they have
 * always had (a single range or country stays a string, so an earlier run's checkpoint still
 * resumes), several values as a list, nothing for what was not given.
 */
export function filtersRecord(filters: CompanyFilters): Record<string, unknown> {
  const oneOrList = (values: string[]) => (values.length === 0 ? undefined : values.length === 1 ? values[0] : values);
  return {
    technologies: filters.technologies,
    notTechnologies: filters.notTechnologies,
    employeeRange: oneOrList(filters.employeeRanges),
    country: oneOrList(filters.countries),
    // Only when given, so a checkpoint's fingerprint from before them still resumes.
    ...(filters.industries.length > 0 ? { industries: filters.industries } : {}),
    ...(filters.maxRank !== undefined ? { maxRank: filters.maxRank } : {}),
  };
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

function lower(name: string): string {
  return name.trim().toLowerCase();
}
