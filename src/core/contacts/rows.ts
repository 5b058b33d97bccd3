import { SENIORITIES, type Contact, type ContactsMeta } from '../../api/index.js';
import type { Column } from '../../io/columns.js';
import { classifyFreshness } from '../../io/max-age.js';
import { emailClass } from '../shared/email-class.js';

import type { ContactRow } from '../shared/contact-row.js';

export type { ContactRow };

export function toContactRow(
  contact: Contact,
  source: ContactsMeta['source'] | undefined,
  cutoff: Date,
  now: Date,
): ContactRow {
  return {
    ...contact,
    ...classifyFreshness({ email: contact.business_email, lastSeen: contact.business_email_last_seen }, cutoff, now),
    email_class: emailClass(contact.business_email, contact.domain),
    verification: null,
    verified_at: null,
    source: source ?? null,
  };
}

/**
 * The N most useful of a domain's rows (--per-company): the most senior first, then those whose
 * address is fresh, then the most recently confirmed; among equals, the service's order. The rows
 * come out in that order.
 */
export function mostUseful(rows: readonly ContactRow[], count: number): ContactRow[] {
  const ranked = rows.map((row, index) => ({
    row,
    index,
    seniority: seniorityRank(row.seniority),
    fresh: row.email_freshness === 'fresh' ? 0 : 1,
    seen: lastSeenDay(row),
  }));
  ranked.sort(
    (a, b) => a.seniority - b.seniority || a.fresh - b.fresh || b.seen.localeCompare(a.seen) || a.index - b.index,
  );
  return ranked.slice(0, count).map(({ row }) => row);
}

/** A seniority the service added after this client was written ranks below the known ones. */
function seniorityRank(seniority: string | null | undefined): number {
  const rank = (SENIORITIES as readonly string[]).indexOf(seniority ?? '');
  return rank === -1 ? SENIORITIES.length : rank;
}

/** `YYYY-MM-DD` sorts as text; an address of unknown date below any date, no address below that. */
function lastSeenDay(row: ContactRow): string {
  if (!row.business_email) return '';
  return row.business_email_last_seen ? row.business_email_last_seen.slice(0, 10) : '0';
}

/** "Licensed contact data (licensed, Publisher)" - the spec demands the source on every contact row. */
export function sourceText(source: ContactsMeta['source'] | null): string {
  if (!source) return '';
  const detail = [source.method, source.publisher].filter(Boolean).join(', ');
  return `${source.dataset ?? 'contact data'}${detail ? ` (${detail})` : ''}`;
}

/** The stable CSV columns of `prospect contacts`, documented in the README; order matters. */
export const CONTACT_COLUMNS: ReadonlyArray<Column<ContactRow>> = [
  { name: 'domain', get: (row) => row.domain },
  { name: 'full_name', get: (row) => row.full_name },
  { name: 'first_name', get: (row) => row.first_name },
  { name: 'last_name', get: (row) => row.last_name },
  { name: 'title', get: (row) => row.title },
  { name: 'seniority', get: (row) => row.seniority },
  { name: 'department', get: (row) => row.department },
  { name: 'business_email', get: (row) => row.business_email },
  { name: 'business_email_last_seen', get: (row) => row.business_email_last_seen },
  { name: 'email_age_days', get: (row) => row.email_age_days },
  { name: 'email_freshness', get: (row) => row.email_freshness },
  { name: 'email_class', get: (row) => row.email_class },
  { name: 'verification', get: (row) => row.verification },
  { name: 'verified_at', get: (row) => row.verified_at },
  { name: 'linkedin_url', get: (row) => row.linkedin_url },
  { name: 'source', get: (row) => sourceText(row.source) },
];

export const CONTACT_TABLE_COLUMNS = [
  'domain',
  'full_name',
  'title',
  'seniority',
  'business_email',
  'email_freshness',
  'verification',
];
