/**
 * The companies query engine: resolves filter parameters against the dataset (400 for malformed values,
 * 422 for values the service cannot answer, contract row 7), pages through a technology's posting list,
 * and computes the totals of a matching set (cached: they cost a pass over the whole set).
 */
import { EMPLOYEE_RANGES } from './dataset/firmographics.js';
import type { Dataset } from './dataset/dataset.js';
import { shadowedDuplicates } from './dataset/stacks.js';
import { invalidParameter, missingParameter, unprocessable } from './errors.js';
import { truncate } from './query.js';
import { closestNames } from './suggestions.js';

export interface CompanyFilterParams {
  /** Every `technology` given: all must be run (contract row 4: the parameter may repeat). */
  technology: readonly string[];
  /** Every `not_technology` given: none may be run. */
  not_technology: readonly string[];
  employee_range?: string | undefined;
  country?: string | undefined;
}

export interface CompanyFilters {
  readonly technology: number;
  readonly notTechnology: number | undefined;
  /** The technologies after the first of each kind (repeated parameters), checked on each company's stack. */
  readonly alsoRequired: readonly number[];
  readonly alsoExcluded: readonly number[];
  /** Accepted employee-range label indices, or undefined for any. */
  readonly employeeMask: Uint8Array | undefined;
  readonly employeeRange: string | undefined;
  readonly country: number | undefined;
  /** Canonical text of the filters: the identity a cursor is bound to. */
  readonly key: string;
}

export interface Totals {
  readonly total: number;
  readonly contactCount: number;
}

export interface Page {
  readonly companies: number[];
  readonly hasMore: boolean;
}

const TOTALS_CACHE_SIZE = 256;
const MAX_NAME_LENGTH = 200;

export class CompanyQueryEngine {
  private readonly technologyNames: readonly string[];
  private readonly countryIndexByName: ReadonlyMap<string, number>;
  private readonly totalsCache = new Map<string, Totals>();

  constructor(private readonly dataset: Dataset) {
    const shadowed = shadowedDuplicates(dataset.catalog);
    this.technologyNames = dataset.catalog.names.filter((_, t) => !shadowed.has(t));
    const present = new Set(dataset.countriesPresent);
    this.countryIndexByName = new Map(
      dataset.firmographics.countries.flatMap((c, i) => (present.has(c.name) ? [[c.name, i] as [string, number]] : [])),
    );
  }

  /** 400 for a missing or malformed parameter, then 422 for one the data cannot answer. */
  resolve(params: CompanyFilterParams): CompanyFilters {
    if (params.technology.length === 0 || params.technology.some((name) => name.trim() === ''))
      throw missingParameter('technology');
    const range = params.employee_range === undefined ? undefined : parseRange(params.employee_range);
    if (params.country !== undefined && params.country.trim() === '')
      throw invalidParameter('country', "'country' must not be empty.");
    if (params.not_technology.some((name) => name.trim() === '')) {
      throw invalidParameter('not_technology', "'not_technology' must not be empty.");
    }

    const required = unique(params.technology.map((name) => this.technologyIndex('technology', name)));
    const excluded = unique(params.not_technology.map((name) => this.technologyIndex('not_technology', name)));
    const both = required.find((t) => excluded.includes(t));
    if (both !== undefined) {
      throw unprocessable(
        'contradictory_filters',
        `technology and not_technology both name ${this.name(both)}: no company can both run and not run it.`,
      );
    }
    const [technology, ...alsoRequired] = required as [number, ...number[]];
    const [notTechnology, ...alsoExcluded] = excluded;
    const employeeMask = range === undefined ? undefined : employeeMaskFor(range);
    const country = params.country === undefined ? undefined : this.countryIndex(params.country);
    const rangeText = range === undefined ? undefined : `${range.low}-${range.high}`;
    // A query of one technology of each kind keeps the key it always had (its cursors stay valid).
    const extra =
      alsoRequired.length + alsoExcluded.length > 0
        ? [[...alsoRequired].sort((a, b) => a - b), [...alsoExcluded].sort((a, b) => a - b)]
        : [];
    const key = JSON.stringify([technology, notTechnology ?? null, rangeText ?? null, country ?? null, ...extra]);
    return {
      technology,
      notTechnology,
      alsoRequired,
      alsoExcluded,
      employeeMask,
      employeeRange: rangeText,
      country,
      key,
    };
  }

  /**
   * With several technologies of a kind (contract row 4): the catalog's names the answer applied, for
   * `meta.technologies`.
   */
  appliedTechnologies(filters: CompanyFilters): { all_of: string[]; none_of: string[] } | undefined {
    if (filters.alsoRequired.length + filters.alsoExcluded.length === 0) return undefined;
    const names = (list: ReadonlyArray<number | undefined>) =>
      list.flatMap((t) => (t === undefined ? [] : [this.name(t)]));
    return {
      all_of: names([filters.technology, ...filters.alsoRequired]),
      none_of: names([filters.notTechnology, ...filters.alsoExcluded]),
    };
  }

  /** Up to `limit` matching companies after position `after` (-1: from the start). */
  page(filters: CompanyFilters, after: number, limit: number): Page {
    const postings = this.dataset.postingsOf(filters.technology);
    const companies: number[] = [];
    for (let k = firstAfter(postings, after); k < postings.length; k++) {
      const i = postings[k] as number;
      if (!this.matches(filters, i)) continue;
      if (companies.length === limit) return { companies, hasMore: true };
      companies.push(i);
    }
    return { companies, hasMore: false };
  }

  totals(filters: CompanyFilters): Totals {
    const cached = this.totalsCache.get(filters.key);
    if (cached) {
      // Refresh its place so the cache evicts the least recently used query.
      this.totalsCache.delete(filters.key);
      this.totalsCache.set(filters.key, cached);
      return cached;
    }
    let total = 0;
    let contactCount = 0;
    for (const i of this.dataset.postingsOf(filters.technology)) {
      if (!this.matches(filters, i)) continue;
      total++;
      contactCount += this.dataset.contactCounts[i] as number;
    }
    const totals = { total, contactCount };
    this.totalsCache.set(filters.key, totals);
    if (this.totalsCache.size > TOTALS_CACHE_SIZE)
      this.totalsCache.delete(this.totalsCache.keys().next().value as string);
    return totals;
  }

  /** Words for a no_match reason: "Shopify, without Klaviyo, 11-500 employees, in united kingdom". */
  describe(filters: CompanyFilters): string {
    const parts = [this.name(filters.technology)];
    for (const t of filters.alsoRequired) parts.push(this.name(t));
    if (filters.notTechnology !== undefined)
      parts.push(`without ${[filters.notTechnology, ...filters.alsoExcluded].map((t) => this.name(t)).join(' or ')}`);
    if (filters.employeeRange !== undefined) parts.push(`${filters.employeeRange} employees`);
    if (filters.country !== undefined)
      parts.push(`in ${this.dataset.firmographics.countries[filters.country]?.name ?? ''}`);
    return parts.join(', ');
  }

  name(technology: number): string {
    return this.dataset.catalog.names[technology] as string;
  }

  private matches(filters: CompanyFilters, i: number): boolean {
    const d = this.dataset;
    if (filters.country !== undefined && d.country[i] !== filters.country) return false;
    if (filters.employeeMask !== undefined && filters.employeeMask[d.employee[i] as number] !== 1) return false;
    if (filters.notTechnology !== undefined && d.hasTechnology(i, filters.notTechnology)) return false;
    for (const t of filters.alsoRequired) if (!d.hasTechnology(i, t)) return false;
    for (const t of filters.alsoExcluded) if (d.hasTechnology(i, t)) return false;
    return true;
  }

  private technologyIndex(parameter: string, raw: string): number {
    const name = raw.trim();
    const t =
      name.length <= MAX_NAME_LENGTH ? this.dataset.catalog.indexByLowerName.get(name.toLowerCase()) : undefined;
    if (t !== undefined) return t;
    const suggestions =
      name.length <= MAX_NAME_LENGTH ? closestNames(name, this.technologyNames, (n) => this.sitesRunning(n)) : [];
    throw unprocessable(
      'unknown_technology',
      `'${truncate(name)}' (${parameter}) is not a technology in the catalog.${didYouMean(suggestions)}`,
      {
        parameter,
        suggestions,
      },
    );
  }

  private sitesRunning(name: string): number {
    const t = this.dataset.catalog.indexByLowerName.get(name.toLowerCase());
    return t === undefined ? 0 : this.dataset.postingsOf(t).length;
  }

  private countryIndex(raw: string): number {
    const name = raw.trim().toLowerCase();
    const c = this.countryIndexByName.get(name);
    if (c !== undefined) return c;
    const suggestions = name.length <= MAX_NAME_LENGTH ? closestNames(name, [...this.countryIndexByName.keys()]) : [];
    throw unprocessable(
      'unknown_country',
      `'${truncate(raw.trim())}' is not a country in the dataset.${didYouMean(suggestions)}`,
      {
        parameter: 'country',
        suggestions,
      },
    );
  }
}

function unique(values: number[]): number[] {
  return [...new Set(values)];
}

function didYouMean(suggestions: readonly string[]): string {
  return suggestions.length === 0 ? '' : ` Did you mean: ${suggestions.join(', ')}?`;
}

/** `<low>-<high>` with low <= high; anything else is malformed (400), not "unknown" (422). */
function parseRange(raw: string): { low: number; high: number } {
  const match = /^\s*([0-9]{1,9})-([0-9]{1,9})\s*$/.exec(raw);
  if (!match)
    throw invalidParameter('employee_range', "'employee_range' must look like <low>-<high>, for example 11-500.");
  const low = Number(match[1]);
  const high = Number(match[2]);
  if (low > high)
    throw invalidParameter('employee_range', "'employee_range' must have its low bound first, for example 11-500.");
  return { low, high };
}

/** Containment (contract row 5): a label matches when it lies inside the asked range. */
function employeeMaskFor(range: { low: number; high: number }): Uint8Array {
  const mask = new Uint8Array(EMPLOYEE_RANGES.length);
  EMPLOYEE_RANGES.forEach((label, i) => {
    if (label.low >= range.low && label.high <= range.high) mask[i] = 1;
  });
  if (!mask.includes(1)) {
    const valid = EMPLOYEE_RANGES.map((r) => r.label);
    throw unprocessable(
      'unknown_employee_range',
      `No employee range label lies inside ${range.low}-${range.high}. Labels: ${valid.join(', ')}.`,
      {
        parameter: 'employee_range',
        valid_values: valid,
      },
    );
  }
  return mask;
}

/** Index of the first posting greater than `after` (postings are ascending). */
function firstAfter(postings: Uint32Array, after: number): number {
  let lo = 0;
  let hi = postings.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((postings[mid] as number) <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
