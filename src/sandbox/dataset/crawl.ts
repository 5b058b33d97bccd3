/**
 * The monthly crawl (issue 45): what the crawl of a month saw, computed directly from the generated
 * dataset, which is the crawl of REFERENCE_CRAWL. No month is reached by walking from another: each
 * (company, technology) pair, and each company's place in the crawl's scope, draws from a hash how
 * long it lasts on either side of the reference month, so a month costs one comparison per pair.
 *
 * After the reference, technologies are dropped (half of them for another of their category: one
 * e-mail platform for another), companies adopt one more, leave the scope or drop out of it for a
 * few months; before it, the same events run backwards (not yet adopted, since dropped, not yet in
 * scope). Between two neighbouring months a few percent of companies differ (docs/sandbox.md).
 */
import type { Catalog } from './catalog.js';
import { monthNumber, REFERENCE_CRAWL } from './crawl-month.js';
import { buildPostings, packStacks, type StackColumns } from './postings.js';
import { hash32, hashStep } from './random.js';
import { shadowedDuplicates } from './stacks.js';

/** Per month away from the reference month, the chance that… */
const HAZARD = {
  /** …a technology of a company is dropped (after the reference), or is not adopted yet (before). */
  pair: 0.0012,
  /** …a company runs one technology more (after), or one it has dropped since (before). */
  extra: 0.006,
  /** …a company leaves the crawl's scope for good (after), or has not entered it yet (before). */
  scope: 0.002,
  /** …a company is out of scope for one to LONGEST_GAP months and comes back. */
  gap: 0.003,
} as const;
/** Of the technologies dropped (or not yet adopted), the share replaced by another of their category. */
const SWITCH_SHARE = 0.5;
const LONGEST_GAP = 3;
/** A site's platform is not switched from month to month: its apps and plugins depend on it. */
const STABLE_CATEGORIES: ReadonlySet<string> = new Set(['CMS', 'Ecommerce']);
/** Salts above any catalog index, so a company's own draws never meet a pair's. */
const SALT = { switch: 0x10001, partner: 0x10002, extra: 0x10003, extraOf: 0x10004, scope: 0x10005, gap: 0x10006 };
const TWO_32 = 0x100000000;

/** The stacks of every company as the crawl of `month` saw them: empty for a company out of its scope. */
export function crawlStacks(base: StackColumns, seed: number, month: string, catalog: Catalog): StackColumns {
  const away = monthNumber(month) - monthNumber(REFERENCE_CRAWL);
  if (away === 0) return base;
  const draws = new MonthDraws(seed, away, new CategoryPicker(catalog, base.postingOffsets));
  const { techOffsets, techs } = packStacks(base.techOffsets.length - 1, base.techs.length + 1024, (i) =>
    draws.stackOf(i, base.techs.subarray(base.techOffsets[i] as number, base.techOffsets[i + 1] as number)),
  );
  return { techOffsets, techs, ...buildPostings(techOffsets, techs, catalog.size) };
}

/** One month's draws: the thresholds a pair's or a company's hash is compared with. */
class MonthDraws {
  private readonly sideHash: number;
  private readonly months: number;
  private readonly keepPair: number;
  private readonly noExtra: number;
  private readonly keepCompany: number;
  private readonly out: number[] = [];

  constructor(
    seed: number,
    away: number,
    private readonly picker: CategoryPicker,
  ) {
    // Each side of the reference draws apart: what was adopted lately is not what will be dropped.
    this.sideHash = hash32(seed, 'crawl', away < 0 ? 0 : 1);
    this.months = Math.abs(away);
    this.keepPair = survival(HAZARD.pair, this.months);
    this.noExtra = survival(HAZARD.extra, this.months);
    this.keepCompany = survival(HAZARD.scope, this.months);
  }

  /** Company i's stack in this month (`stack`: its reference stack, ascending), ascending; empty: out of scope. */
  stackOf(i: number, stack: Uint16Array): readonly number[] {
    const h = hashStep(this.sideHash, i);
    const out = this.out;
    out.length = 0;
    if (!this.inScope(h)) return out;
    let added: number[] | undefined;
    for (let k = 0; k < stack.length; k++) {
      const t = stack[k] as number;
      const pair = hashStep(h, t);
      if (pair < this.keepPair || this.picker.stable[t] === 1) {
        out.push(t);
      } else if (hashStep(pair, SALT.switch) < SWITCH_SHARE * TWO_32) {
        const other = this.picker.another(t, hashStep(pair, SALT.partner), stack);
        if (other >= 0) (added ??= []).push(other);
      }
    }
    if (hashStep(h, SALT.extra) >= this.noExtra && stack.length > 0) {
      const like = stack[hashStep(h, SALT.extraOf) % stack.length] as number;
      const other = this.picker.stable[like] === 1 ? -1 : this.picker.another(like, hashStep(h, SALT.partner), stack);
      if (other >= 0) (added ??= []).push(other);
    }
    // Added technologies are never in the reference stack, so only they can repeat one another.
    if (added) for (const t of new Set(added)) out.push(t);
    if (added) out.sort((a, b) => a - b);
    return out;
  }

  private inScope(h: number): boolean {
    if (hashStep(h, SALT.scope) >= this.keepCompany) return false;
    const draw = hashStep(h, SALT.gap);
    // The gap ends `ends` months before the reference (or starts that long after it) and lasts 1-3 months.
    const ends = Math.floor(Math.log((draw + 1) / TWO_32) / Math.log(1 - HAZARD.gap));
    const length = 1 + (hashStep(draw, SALT.gap) % LONGEST_GAP);
    return !(this.months - length <= ends && ends < this.months);
  }
}

/** The hash threshold below which something lasts `months` months at a monthly `hazard`. */
function survival(hazard: number, months: number): number {
  return Math.floor(Math.pow(1 - hazard, months) * TWO_32);
}

/** Another technology of a technology's category, drawn by how many sites run it. */
class CategoryPicker {
  /** 1 for a technology of a stable category. */
  readonly stable: Uint8Array;
  private readonly categoryOf: Uint16Array;
  private readonly members: Array<{ techs: number[]; cumulative: number[] }> = [];

  constructor(catalog: Catalog, postingOffsets: Uint32Array) {
    const categories = [...new Set(catalog.categories)];
    const indexOf = new Map(categories.map((c, i) => [c, i]));
    this.categoryOf = Uint16Array.from(catalog.categories, (c) => indexOf.get(c) as number);
    this.stable = Uint8Array.from(catalog.categories, (c) => (STABLE_CATEGORIES.has(c) ? 1 : 0));
    for (let c = 0; c < categories.length; c++) this.members.push({ techs: [], cumulative: [] });
    const shadowed = shadowedDuplicates(catalog);
    for (let t = 0; t < catalog.size; t++) {
      const sites = (postingOffsets[t + 1] as number) - (postingOffsets[t] as number);
      if (sites === 0 || shadowed.has(t)) continue;
      const members = this.members[this.categoryOf[t] as number] as { techs: number[]; cumulative: number[] };
      members.techs.push(t);
      members.cumulative.push((members.cumulative[members.cumulative.length - 1] ?? 0) + sites);
    }
  }

  /** A technology of t's category that `stack` (ascending) does not run, or -1 after a few draws. */
  another(t: number, draw: number, stack: Uint16Array): number {
    const { techs, cumulative } = this.members[this.categoryOf[t] as number] as {
      techs: number[];
      cumulative: number[];
    };
    const total = cumulative[cumulative.length - 1] ?? 0;
    for (let attempt = 0; attempt < 4 && total > 0; attempt++, draw = hashStep(draw, attempt)) {
      const other = techs[firstAbove(cumulative, (draw / TWO_32) * total)] as number;
      if (!contains(stack, other)) return other;
    }
    return -1;
  }
}

/** Index of the first value above `x` (values ascending). */
function firstAbove(values: readonly number[], x: number): number {
  let lo = 0;
  let hi = values.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((values[mid] as number) > x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Whether a sorted stack holds technology `t` (a binary search: stacks are sorted by id). */
export function contains(stack: Uint16Array, t: number): boolean {
  let lo = 0;
  let hi = stack.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = stack[mid] as number;
    if (v === t) return true;
    if (v < t) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}
