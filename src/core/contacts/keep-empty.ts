import { ContactSchema } from '../../api/index.js';
import type { ContactSettings } from './options.js';
import { toContactRow, type ContactRow } from './rows.js';
import type { Reporter } from '../../ui/reporter.js';
import { countOf } from '../../ui/format-count.js';

/**
 * --keep-empty: the row that shows a company without any named contact (none at the service, or all
 * of them on --exclude-emails), so a list owner sees the coverage. Every contact column is empty;
 * `email_freshness` is `none`, as for any row without an address.
 */
export function emptyContactRow(domain: string, settings: Pick<ContactSettings, 'cutoff'>, now: Date): ContactRow {
  // The contract's contact with only a domain: every other field null.
  const nobody = ContactSchema.parse({ domain });
  return toContactRow(nobody, undefined, settings.cutoff, now);
}

/** The summary line of --keep-empty's rows, when there are any. */
export function reportKeptEmpty(reporter: Reporter, keptEmpty: number): void {
  if (keptEmpty === 0) return;
  const companies = countOf(keptEmpty, 'company', 'companies');
  reporter.info(`${companies} without a named contact kept as empty rows (--keep-empty).`);
}
