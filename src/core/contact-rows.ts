import type { Contact, ContactsMeta } from '../api/index.js';
import type { Column } from '../io/columns.js';
import { classifyFreshness, type EmailFreshness } from '../io/max-age.js';

/** A contact as prospect writes it: the service's record plus freshness, verification and source. */
export type ContactRow = Contact & {
  email_age_days: number | null;
  email_freshness: EmailFreshness;
  verification: string | null;
  verified_at: string | null;
  source: ContactsMeta['source'] | null;
};

export function toContactRow(contact: Contact, source: ContactsMeta['source'] | undefined, cutoff: Date, now: Date): ContactRow {
  return {
    ...contact,
    ...classifyFreshness({ email: contact.business_email, lastSeen: contact.business_email_last_seen }, cutoff, now),
    verification: null,
    verified_at: null,
    source: source ?? null,
  };
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
  { name: 'verification', get: (row) => row.verification },
  { name: 'verified_at', get: (row) => row.verified_at },
  { name: 'linkedin_url', get: (row) => row.linkedin_url },
  { name: 'source', get: (row) => sourceText(row.source) },
];

export const CONTACT_TABLE_COLUMNS = ['domain', 'full_name', 'title', 'seniority', 'business_email', 'email_freshness', 'verification'];
