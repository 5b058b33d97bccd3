import { z } from 'zod';
import type { CompanyQuery, CompanyRow } from '../api/index.js';
import { UsageError } from '../exit-codes.js';

/**
 * The company filters `companies` and `pipeline` share: the flags as commander gives them (the
 * input type), and the filters as the jobs, the sidecar and the checkpoint's fingerprint name them
 * (the output type). The service takes one technology of each kind, the rest is checked here.
 */
export const companyFiltersSchema = z
  .object({
    technology: z.array(z.string()),
    notTechnology: z.array(z.string()),
    employeeRange: z.string().optional(),
    country: z.string().optional(),
  })
  .transform(({ technology, notTechnology, ...place }) => ({ technologies: technology, notTechnologies: notTechnology, ...place }));
export type CompanyFilterFlags = z.input<typeof companyFiltersSchema>;
export type CompanyFilters = z.output<typeof companyFiltersSchema>;

/** A command's flag schema with the company filter flags in it; its output holds them as `filters`. */
export function withCompanyFilters<Shape extends z.ZodRawShape>(shape: Shape) {
  return z
    .object({ ...companyFiltersSchema.in.shape, ...shape })
    .transform((flags) => {
      const { technology, notTechnology, employeeRange, country, ...rest } = flags as CompanyFilterFlags & Omit<z.output<z.ZodObject<Shape>>, keyof CompanyFilterFlags>;
      return { ...rest, filters: companyFiltersSchema.parse({ technology, notTechnology, employeeRange, country }) };
    });
}

const EMPLOYEE_RANGE = /^\d+-\d+$/;

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
  if (both.length > 0) throw new UsageError(`"${both[0]}" is both a --technology and a --not-technology: nothing can match.`);
  if (filters.employeeRange !== undefined) {
    const [low, high] = filters.employeeRange.split('-').map(Number);
    if (!EMPLOYEE_RANGE.test(filters.employeeRange) || low! > high!) {
      throw new UsageError(`--employee-range must look like 11-500 (low-high), not "${filters.employeeRange}".`);
    }
  }
  if (filters.country !== undefined && filters.country.trim() === '') throw new UsageError('--country cannot be empty.');
}

export function serviceQuery(filters: CompanyFilters): CompanyQuery {
  return {
    technology: filters.technologies[0]!.trim(),
    notTechnology: filters.notTechnologies[0]?.trim(),
    employeeRange: filters.employeeRange,
    country: filters.country?.trim().toLowerCase(),
  };
}

/** The filters the service cannot express, applied to each row's whole stack. */
export function localStackFilter(filters: CompanyFilters): ((row: CompanyRow) => boolean) | undefined {
  const required = filters.technologies.slice(1).map(lower);
  const excluded = filters.notTechnologies.slice(1).map(lower);
  if (required.length === 0 && excluded.length === 0) return undefined;
  return (row) => {
    const stack = new Set((row.technologies ?? []).map((entry) => lower(entry.t)));
    return required.every((name) => stack.has(name)) && !excluded.some((name) => stack.has(name));
  };
}

export function describeFilters(filters: CompanyFilters): string {
  const parts = [
    ...filters.technologies.map((name) => `runs ${name}`),
    ...filters.notTechnologies.map((name) => `not ${name}`),
    ...(filters.employeeRange ? [`${filters.employeeRange} employees`] : []),
    ...(filters.country ? [`in ${filters.country}`] : []),
  ];
  return parts.join(', ');
}

function lower(name: string): string {
  return name.trim().toLowerCase();
}
