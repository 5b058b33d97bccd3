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
