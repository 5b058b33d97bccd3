/**
 * `--max-age`: how recently a business email must have been seen to count as fresh, and the
 * classification of one contact against it. All dates are whole UTC days, as the service's
 * `business_email_last_seen` is (docs/api-contract.md, decision 25).
 */

export type MaxAgeResult = { ok: true; cutoff: Date; description: string } | { ok: false; reason: string };

export type EmailFreshness = 'fresh' | 'stale' | 'unknown' | 'none';

export interface FreshnessColumns {
  email_age_days: number | null;
  email_freshness: EmailFreshness;
}

const DAY_MS = 86_400_000;
// Beyond a century the question is meaningless, and bounding it keeps Date arithmetic finite.
const MAX_YEARS = 100;

const EXPECTED = 'expected a number of days (90d), weeks (12w), months (6m), years (1y) or a date (2026-01-31)';

type Unit = 'day' | 'week' | 'month' | 'year';

const UNIT_NAMES: Record<string, Unit> = {
  d: 'day',
  day: 'day',
  days: 'day',
  w: 'week',
  wk: 'week',
  wks: 'week',
  week: 'week',
  weeks: 'week',
  m: 'month',
  mo: 'month',
  mos: 'month',
  mon: 'month',
  month: 'month',
  months: 'month',
  y: 'year',
  yr: 'year',
  yrs: 'year',
  year: 'year',
  years: 'year',
};

/**
 * Parses a maximum age into a cutoff: an address last seen before the cutoff (the start of a UTC
 * day) is stale; seen on the cutoff day or later, it is fresh. `90d` run on 2026-05-01 gives the
 * cutoff 2026-01-31, so an address exactly 90 days old is still fresh.
 *
 * `0d` (or `0`) is allowed: the cutoff is today, so only addresses seen today are fresh. It is a
 * strict but meaningful request, and refusing it would make the scale start at an odd place.
 * Months and years are calendar months and years (6m from 2026-08-31 is 2026-02-28), because
 * that is what people mean by them.
 */
export function parseMaxAge(text: string, now: Date): MaxAgeResult {
  const today = startOfUtcDay(now);
  if (today === null) return { ok: false, reason: 'the current date is invalid' };
  const input = text.trim().toLowerCase();
  if (input === '') return { ok: false, reason: `empty; ${EXPECTED}` };
  if (/^\d{4}-\d{2}-\d{2}$/.test(input)) return cutoffFromDate(input, today);
  const match = /^(\d+)\s*([a-z]*)$/.exec(input);
  if (match === null) return { ok: false, reason: `"${text.trim()}" is not a duration; ${EXPECTED}` };
  const [, digits = '', unitName = ''] = match;
  const unit = unitName === '' ? 'day' : UNIT_NAMES[unitName];
  if (unit === undefined) return { ok: false, reason: `unknown unit "${unitName}"; ${EXPECTED}` };
  const amount = Number(digits);
  if (amount > MAX_YEARS * unitsPerYear(unit)) return { ok: false, reason: `more than ${MAX_YEARS} years` };
  const cutoff = subtract(today, amount, unit);
  return {
    ok: true,
    cutoff,
    description: `${amount} ${plural(unit, amount)} (last seen on or after ${isoDay(cutoff)})`,
  };
}

function daysSince(seen: Date | null, now: Date): number | null {
  const today = startOfUtcDay(now);
  if (seen === null || today === null) return null;
  return Math.max(0, Math.round((today.getTime() - seen.getTime()) / DAY_MS));
}

/** The two output columns for one contact. `email` is its business email (null or '' if none). */
export function classifyFreshness(
  contact: { email: string | null | undefined; lastSeen: string | null | undefined },
  cutoff: Date,
  now: Date,
): FreshnessColumns {
  if (contact.email === null || contact.email === undefined || contact.email.trim() === '') {
    return { email_age_days: null, email_freshness: 'none' };
  }
  // Parsed once: this runs for every contact of an export.
  const seen = parseDay(contact.lastSeen ?? null);
  const age = daysSince(seen, now);
  if (seen === null || age === null) return { email_age_days: null, email_freshness: 'unknown' };
  return { email_age_days: age, email_freshness: seen.getTime() < cutoff.getTime() ? 'stale' : 'fresh' };
}

/** `YYYY-MM-DD`, optionally followed by a time, as midnight UTC of that date; null if not a real date. */
export function parseDay(value: string | null): Date | null {
  if (value === null) return null;
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:$|[T ])/.exec(value.trim());
  if (match === null) return null;
  const [, year = '', month = '', day = ''] = match;
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  // Date.UTC rolls 2026-02-30 over into March; a date that does not survive the round trip is not real.
  return isoDay(date) === `${year}-${month}-${day}` ? date : null;
}

function cutoffFromDate(input: string, today: Date): MaxAgeResult {
  const cutoff = parseDay(input);
  if (cutoff === null) return { ok: false, reason: `${input} is not a real date` };
  if (cutoff.getTime() > today.getTime()) return { ok: false, reason: `${input} is in the future` };
  return { ok: true, cutoff, description: `last seen on or after ${input}` };
}

function startOfUtcDay(date: Date): Date | null {
  const time = date.getTime();
  if (Number.isNaN(time)) return null;
  return new Date(time - (((time % DAY_MS) + DAY_MS) % DAY_MS));
}

function subtract(today: Date, amount: number, unit: Unit): Date {
  switch (unit) {
    case 'day':
      return new Date(today.getTime() - amount * DAY_MS);
    case 'week':
      return new Date(today.getTime() - amount * 7 * DAY_MS);
    case 'month':
      return subtractMonths(today, amount);
    case 'year':
      return subtractMonths(today, amount * 12);
  }
}

/** Calendar months back, clamping the day to the target month's length (Mar 31 - 1m = Feb 28/29). */
function subtractMonths(today: Date, months: number): Date {
  const totalMonths = today.getUTCFullYear() * 12 + today.getUTCMonth() - months;
  const year = Math.floor(totalMonths / 12);
  const month = totalMonths - year * 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return new Date(Date.UTC(year, month, Math.min(today.getUTCDate(), lastDay)));
}

function unitsPerYear(unit: Unit): number {
  return { day: 366, week: 53, month: 12, year: 1 }[unit];
}

function plural(unit: Unit, amount: number): string {
  return amount === 1 ? unit : `${unit}s`;
}

function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}
