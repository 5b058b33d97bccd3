/**
 * How many companies (and named contacts) are in the set a user built, from what the service
 * counted of each query (`meta.total`, `meta.contact_count`). A number is given for the set only
 * when it is the set's: the queries' counts add up when no company can be in two of them, and
 * filters checked here (technologies after the first of each kind, industries, --max-rank) leave
 * the service counting a wider set, which is then said to be wider.
 */
import type { CompaniesMeta } from '../../api/index.js';
import { formatCount } from '../../ui/format-count.js';
import { locallyApplied, queriesAreDisjoint, type CompanyFilters } from './filters.js';
import type { QueryAnswer } from './walk.js';

export type SetCount =
  /** The set's own count. */
  | { exact: true; companies: number; contacts: number | undefined }
  /** The service counted a wider set: the one without the technologies checked here. */
  | {
      exact: false;
      wider: { companies: number; contacts: number | undefined; counted: string; appliedLocally: string[] };
    }
  /** No count can be given (a query without a count, or queries that overlap). */
  | { exact: false; wider: undefined };

export function countSet(filters: CompanyFilters, answers: ReadonlyArray<QueryAnswer | undefined>): SetCount {
  const counts = answers.map((answer) =>
    answer?.kind === 'no_match'
      ? { companies: 0, contacts: 0 }
      : answer?.kind === 'meta'
        ? { companies: answer.meta.total, contacts: answer.meta.contact_count }
        : undefined,
  );
  if (counts.some((count) => count?.companies === undefined) || !queriesAreDisjoint(filters))
    return { exact: false, wider: undefined };
  const companies = counts.reduce((sum, count) => sum + count!.companies!, 0);
  const contacts = counts.every((count) => count!.contacts !== undefined)
    ? counts.reduce((sum, count) => sum + count!.contacts!, 0)
    : undefined;
  const appliedLocally = locallyApplied(filters);
  if (appliedLocally.length === 0) return { exact: true, companies, contacts };
  return {
    exact: false,
    wider: { companies, contacts, counted: describeServiceSet(filters, companies), appliedLocally },
  };
}

/**
 * The companies the service lists for every query answered so far (the sum of their meta.total),
 * or undefined until one has a count: what a progress bar counts toward. An upper bound when
 * queries overlap or filters apply locally, so never printed as the set's size.
 */
export function listedCompanies(answers: ReadonlyArray<QueryAnswer | undefined>): number | undefined {
  let total: number | undefined;
  for (const answer of answers) {
    if (answer?.kind === 'meta' && answer.meta.total !== undefined) total = (total ?? 0) + answer.meta.total;
  }
  return total;
}

/**
 * The listing's meta for the set: with one query the service's own; with several, their source and
 * scope, and each field's fill rate weighted by the companies of each query (so they describe the
 * union), or no rates where that cannot be known (a query without a count, queries that overlap).
 */
export function setMeta(
  filters: CompanyFilters,
  answers: ReadonlyArray<QueryAnswer | undefined>,
): CompaniesMeta | undefined {
  const metas = answers.flatMap((answer) => (answer?.kind === 'meta' ? [answer.meta] : []));
  const first = metas[0];
  if (first === undefined || answers.length === 1) return first;
  const weighable = metas.every((meta) => meta.total !== undefined) && queriesAreDisjoint(filters);
  const companies = metas.reduce((sum, meta) => sum + (meta.total ?? 0), 0);
  const fields = [...new Set(metas.flatMap((meta) => Object.keys(meta.field_fill_rates)))];
  const rate = (field: string) =>
    metas.reduce((sum, meta) => sum + (meta.field_fill_rates[field] ?? 0) * meta.total!, 0) / companies;
  const field_fill_rates =
    weighable && companies > 0
      ? Object.fromEntries(fields.map((field) => [field, Math.round(rate(field) * 10) / 10]))
      : {};
  return { ...first, field_fill_rates };
}

/** "16,595 run WordPress; the WooCommerce filter is applied locally": what the wider count counts. */
export function widerCountText(wider: NonNullable<Extract<SetCount, { exact: false }>['wider']>): string {
  const names = wider.appliedLocally;
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  const filters = names.length === 1 ? 'filter is' : 'filters are';
  return `${formatCount(wider.companies)} ${wider.counted}; the ${list} ${filters} applied locally`;
}

/** "Stopped at --max 50 of 2,368", only when 2,368 is the count of the set asked for. */
export function stoppedAtMaxLine(max: number, count: SetCount): string {
  if (count.exact)
    return `Stopped at --max ${formatCount(max)} of ${formatCount(count.companies)}; more companies match.`;
  if (count.wider !== undefined)
    return `Stopped at --max ${formatCount(max)}; more companies match (${widerCountText(count.wider)}).`;
  return `Stopped at --max ${formatCount(max)}; more companies match.`;
}

/** The sidecar's fields: `total` and `contact_count` only for the set itself, else what the service counted. */
export function countRecord(count: SetCount): Record<string, unknown> {
  if (count.exact) return { total: count.companies, contact_count: count.contacts };
  if (count.wider === undefined) return {};
  return {
    service_count: {
      companies: count.wider.companies,
      contacts: count.wider.contacts,
      counts: count.wider.counted.replace(/^runs? /, 'companies that run '),
      applied_locally: count.wider.appliedLocally,
    },
  };
}

function describeServiceSet(filters: CompanyFilters, companies: number): string {
  const parts = [`${companies === 1 ? 'runs' : 'run'} ${filters.technologies[0]!.trim()}`];
  if (filters.notTechnologies.length > 0) parts.push(`but not ${filters.notTechnologies[0]!.trim()}`);
  if (filters.employeeRanges.length > 0) parts.push(`with ${filters.employeeRanges.join(' or ')} employees`);
  if (filters.countries.length > 0) parts.push(`in ${filters.countries.join(' or ')}`);
  return parts.join(' ');
}
