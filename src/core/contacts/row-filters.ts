/**
 * The filters `contacts` and `pipeline` apply to rows after the calls (the service has no such
 * parameters): --department and --title on what a contact is, --deliverable-only on what its
 * address is worth once freshness and verification are known.
 */
import { z } from 'zod';
import { UsageError } from '../../exit-codes.js';
import type { ContactRow } from './rows.js';
import type { Reporter } from '../../ui/reporter.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import { emailClassText, unsendableClass, type EmailClass, type EmailClassCounts } from '../shared/email-class.js';

/** Why --deliverable-only left a row out, one count each in the summary and the run record. */
const UNDELIVERABLE_KINDS = [
  'no_email',
  'role',
  'disposable',
  'invalid',
  'risky',
  'unknown',
  'stale_unverified',
] as const;
export type UndeliverableKind = (typeof UNDELIVERABLE_KINDS)[number];

const count = z.number().int().nonnegative().default(0);
export const undeliverableCountsSchema = z.object({
  no_email: count,
  role: count,
  disposable: count,
  invalid: count,
  risky: count,
  unknown: count,
  stale_unverified: count,
});
export type UndeliverableCounts = z.output<typeof undeliverableCountsSchema>;

/**
 * Null when a rep can send to the row: its address verified `valid`, or fresh and not verified, and
 * not a role or disposable one (unless --keep names its class). An address whose age nobody knows is
 * treated as stale, as --stale verify treats it: left unverified, nothing says it still works.
 */
export function undeliverableKind(row: ContactRow, keepClasses: readonly EmailClass[]): UndeliverableKind | null {
  if (!row.business_email) return 'no_email';
  const unsendable = classLeftOut(row, keepClasses);
  if (unsendable !== null) return unsendable;
  const verdict = row.verification;
  if (verdict === 'valid') return null;
  if (verdict === 'invalid' || verdict === 'risky' || verdict === 'unknown') return verdict;
  // Not verified (never asked, or left unchecked by the budget): only a fresh address is kept.
  return row.email_freshness === 'fresh' ? null : 'stale_unverified';
}

/** 'role' or 'disposable' when --deliverable-only leaves the row out for its address's class alone. */
function classLeftOut(row: ContactRow, keepClasses: readonly EmailClass[]): 'role' | 'disposable' | null {
  if (!unsendableClass(row.email_class, keepClasses)) return null;
  return row.email_class === 'role' ? 'role' : 'disposable';
}

/** The rows a rep can send to; the others counted by kind into `counts`. */
export function keepDeliverable(
  rows: readonly ContactRow[],
  counts: UndeliverableCounts,
  keepClasses: readonly EmailClass[],
): ContactRow[] {
  return rows.filter((row) => {
    const kind = undeliverableKind(row, keepClasses);
    if (kind !== null) counts[kind] += 1;
    return kind === null;
  });
}

/**
 * The rows whose address's class alone keeps them out (role, disposable), left out before any paid
 * check: no unit is spent on a row that will not be written.
 */
export function dropUnsendableClasses(
  rows: readonly ContactRow[],
  counts: UndeliverableCounts,
  keepClasses: readonly EmailClass[],
): ContactRow[] {
  return rows.filter((row) => {
    const kind = row.business_email ? classLeftOut(row, keepClasses) : null;
    if (kind !== null) counts[kind] += 1;
    return kind === null;
  });
}

export function totalUndeliverable(counts: UndeliverableCounts): number {
  return UNDELIVERABLE_KINDS.reduce((sum, kind) => sum + counts[kind], 0);
}

/** "no email 6, invalid 4, risky 1, unknown 0, stale unverified 2" */
function undeliverableText(counts: UndeliverableCounts, format: (n: number) => string): string {
  return UNDELIVERABLE_KINDS.map((kind) => `${kind.replace('_', ' ')} ${format(counts[kind])}`).join(', ');
}

/** --department and --title: a contact kept only if it matches every one given. */
export interface PersonFilter {
  /** Departments, lower-case: the contact's department is one of them (case-insensitive). */
  departments?: string[];
  /** Words, lower-case: the contact's title contains one of them (case-insensitive). */
  titles?: string[];
}

/** The comma-separated values of --department or --title, or a usage error for an empty list. */
export function parsePersonFilter(flags: { department?: string; title?: string }): PersonFilter | undefined {
  const departments = listOf(flags.department, '--department');
  const titles = listOf(flags.title, '--title');
  return departments || titles ? { departments, titles } : undefined;
}

function listOf(text: string | undefined, flag: string): string[] | undefined {
  if (text === undefined) return undefined;
  const values = text
    .split(',')
    .map((value) => value.trim().toLowerCase())
    .filter(Boolean);
  if (values.length === 0) throw new UsageError(`an empty ${flag}.`, `Give one or more, comma-separated.`);
  return [...new Set(values)];
}

export function matchesPerson(
  contact: { department?: string | null; title?: string | null },
  filter: PersonFilter,
): boolean {
  const { departments, titles } = filter;
  if (departments && !departments.includes((contact.department ?? '').trim().toLowerCase())) return false;
  if (titles) {
    const title = (contact.title ?? '').toLowerCase();
    if (!titles.some((word) => title.includes(word))) return false;
  }
  return true;
}

/** The summary lines of the row filters, when they were asked for (the run record has the same counts). */
export function reportRowFilters(
  reporter: Reporter,
  settings: { person?: PersonFilter; deliverableOnly: boolean; stale?: string },
  counts: { filteredOut: number; undeliverable: UndeliverableCounts; email_class: EmailClassCounts },
): void {
  const classes = counts.email_class;
  if (Object.values(classes).some((count) => count > 0) || totalUndeliverable(counts.undeliverable) > 0) {
    const unpaid = settings.stale === 'verify' ? '; a disposable address is never paid for' : '';
    reporter.info(`Addresses written: ${emailClassText(classes, formatCount)}${unpaid}.`);
  }
  if (settings.person)
    reporter.info(
      `${countOf(counts.filteredOut, 'contact')} left out by --department/--title (filtered after the calls).`,
    );
  if (settings.deliverableOnly)
    reporter.info(
      `Left out by --deliverable-only: ${undeliverableText(counts.undeliverable, formatCount)} ` +
        `(${formatCount(totalUndeliverable(counts.undeliverable))} in all).`,
    );
}
