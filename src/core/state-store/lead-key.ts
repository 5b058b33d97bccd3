import { createHash } from 'node:crypto';
import type { ContactRow } from '../shared/contact-row.js';

/**
 * A lead's identity across weekly runs: its email and domain; for a contact without an email,
 * its name and title at the domain. Hashed, so the state directory holds no addresses.
 */
export function leadKey(row: Pick<ContactRow, 'domain' | 'business_email' | 'full_name' | 'title'>): string {
  const identity = row.business_email
    ? `${row.business_email.trim().toLowerCase()}|${row.domain.toLowerCase()}`
    : `${row.domain.toLowerCase()}|${(row.full_name ?? '').toLowerCase()}|${(row.title ?? '').toLowerCase()}`;
  return createHash('sha256').update(identity).digest('hex').slice(0, 24);
}

/**
 * An exported address, for `prospect provenance`: a digest of the address alone (a lead key also holds
 * its company's domain, which a person asking does not know). Each store keys it before keeping it.
 */
export function addressDigest(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 24);
}

/**
 * A lead's line of a run's key file: its lead key, then for a lead with an address the address's
 * digest and its last-confirmed day ('-' for none). A line of the lead key alone, as before, is read too.
 */
export function leadKeyLine(row: LeadFields & { business_email_last_seen?: string | null }): string {
  const key = leadKey(row);
  if (!row.business_email) return key;
  return `${key} ${addressDigest(row.business_email)} ${row.business_email_last_seen?.slice(0, 10) || '-'}`;
}

type LeadFields = Parameters<typeof leadKey>[0];
