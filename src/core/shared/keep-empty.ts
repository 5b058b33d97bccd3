import type { ContactSettings } from '../contacts/options.js';
import { toContactRow, type ContactRow } from '../contacts/rows.js';

/**
 * --keep-empty: the row that shows a company without any named contact (none at the service, or all
 * of them on --exclude-emails), so a list owner sees the coverage. Every contact column is empty; `email_freshness` is `none`, as for any row without an address.
 */
export function emptyContactRow(domain: string, settings: Pick<ContactSettings, 'cutoff'>, now: Date): ContactRow {
  const nobody = {
    domain,
    full_name: null,
    first_name: null,
    last_name: null,
    title: null,
    seniority: null,
    department: null,
    business_email: null,
    business_email_last_seen: null,
    linkedin_url: null,
  };
  return toContactRow(nobody, undefined, settings.cutoff, now);
}
