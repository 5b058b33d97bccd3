import { z } from 'zod';
import type { Contact, ContactsMeta } from '../../api/index.js';
import { emailKey } from '../../io/emails.js';
import type { ContactSettings } from './options.js';
import { mostUseful, toContactRow, type ContactRow } from './rows.js';
import {
  dropUnsendableClasses,
  keepDeliverable,
  matchesPerson,
  undeliverableCountsSchema,
  type UndeliverableCounts,
} from './row-filters.js';
import { newEmailClassCounts } from '../shared/email-class.js';
import { needsVerification } from '../verification/spend-plan.js';
import type { Verifier } from '../verification/verifier.js';

const count = z.number().int().nonnegative().default(0);

/** A run's contact counts; a pipeline keeps them in its checkpoint (read back through this schema). */
export const contactCountsSchema = z.object({
  written: count,
  fresh: count,
  stale: count,
  unknown: count,
  none: count,
  droppedStale: count,
  /** --only-new: leads left out because an earlier run exported them. */
  alreadyExported: count,
  /** --department, --title: contacts the service sent that match neither. */
  filteredOut: count,
  /** --deliverable-only: rows left out, by why. */
  undeliverable: undeliverableCountsSchema.default(() => newUndeliverable()),
  /** The written rows by their address's class (email-class.ts); a row without an address is in none. */
  email_class: z
    .object({ personal: count, role: count, webmail: count, disposable: count })
    .default(() => newEmailClassCounts()),
});
export type ContactCounts = z.output<typeof contactCountsSchema>;

export function newContactCounts(): ContactCounts {
  return contactCountsSchema.parse({});
}

function newUndeliverable(): UndeliverableCounts {
  return undeliverableCountsSchema.parse({});
}

export interface DomainRows {
  rows: ContactRow[];
  droppedStale: number;
  alreadyExported: number;
  filteredOut: number;
  undeliverable: UndeliverableCounts;
}

/** Adds one domain's rows to the run's counts, when they are written (so a resumed run never counts twice). */
export function countRows(counts: ContactCounts, result: DomainRows): void {
  for (const row of result.rows) {
    counts[row.email_freshness] += 1;
    if (row.email_class !== '') counts.email_class[row.email_class] += 1;
  }
  counts.written += result.rows.length;
  counts.droppedStale += result.droppedStale;
  counts.alreadyExported += result.alreadyExported;
  counts.filteredOut += result.filteredOut;
  for (const [kind, dropped] of Object.entries(result.undeliverable))
    counts.undeliverable[kind as keyof UndeliverableCounts] += dropped;
}

/**
 * A row a spooled run left out once verified (--deliverable-only after the plan): it was counted as
 * written when spooled, and is now counted by why it went instead.
 */
export function uncountRow(counts: ContactCounts, row: ContactRow, kind: keyof UndeliverableCounts): void {
  counts[row.email_freshness] -= 1;
  if (row.email_class !== '') counts.email_class[row.email_class] -= 1;
  counts.written -= 1;
  counts.undeliverable[kind] += 1;
}

/**
 * One domain's contacts as output rows: classified by freshness, stale ones dropped as the user
 * asked, then the N most useful of the rest (--per-company, see mostUseful), verified as asked.
 */
export async function contactRowsFor(
  contacts: Contact[],
  source: ContactsMeta['source'] | undefined,
  settings: ContactSettings,
  now: Date,
  verifier: Verifier | undefined,
  /** --only-new: the rows no earlier run exported (one lookup for the domain's rows). */
  keepNew: (rows: ContactRow[]) => ContactRow[] | Promise<ContactRow[]> = (rows) => rows,
): Promise<DomainRows> {
  const person = settings.person;
  const matched = person ? contacts.filter((contact) => matchesPerson(contact, person)) : contacts;
  const all = matched.map((contact) => toContactRow(contact, source, settings.cutoff, now));
  const keep = (rows: ContactRow[]) =>
    settings.perCompany === undefined ? rows : mostUseful(rows, settings.perCompany);
  const isStale = (row: ContactRow) => row.email_freshness === 'stale';
  let rows = keep(settings.stale === 'drop' ? all.filter((row) => !isStale(row)) : all);
  // Dropped: the stale addresses that would have been written without --stale drop.
  const droppedStale = settings.stale === 'drop' ? keep(all).filter(isStale).length : 0;
  // Leads exported before are left out before verification: no unit is spent on what is not written.
  const beforeNew = rows.length;
  rows = await keepNew(rows);
  const alreadyExported = beforeNew - rows.length;
  const undeliverable = newUndeliverable();
  // Role and disposable addresses --deliverable-only will not write are never verified either.
  if (settings.deliverableOnly) rows = dropUnsendableClasses(rows, undeliverable, settings.keepClasses);
  if (settings.stale === 'verify' && verifier) await verifyOldAddresses(rows, verifier);
  // A run that verifies later (a spooled plan) leaves the check to when the verdicts are known.
  if (settings.deliverableOnly && !(settings.stale === 'verify' && !verifier))
    rows = keepDeliverable(rows, undeliverable, settings.keepClasses);
  return { rows, droppedStale, alreadyExported, filteredOut: contacts.length - matched.length, undeliverable };
}

async function verifyOldAddresses(rows: ContactRow[], verifier: Verifier): Promise<void> {
  await Promise.all(
    rows.filter(needsVerification).map(async (row) => {
      const outcome = await verifier.verify(emailKey(row.business_email), row.business_email);
      row.verification = outcome.verification;
      row.verified_at = outcome.verified_at;
    }),
  );
}
