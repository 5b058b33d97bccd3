import type { Reporter } from '../../ui/reporter.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import { MAX_CONTACTS_PER_CALL } from '../../api/index.js';

/**
 * The caveats that several jobs share: each is one line with its count wherever stderr
 * goes (see Reporter), and its items on a terminal or with --verbose.
 */

/** Domains with more contacts at one seniority than the service returns in any call. */
export function reportCutDomains(reporter: Reporter, domains: readonly string[]): void {
  if (domains.length === 0) return;
  const max = formatCount(MAX_CONTACTS_PER_CALL);
  reporter.caveat(
    `${countOf(domains.length, 'domain has', 'domains have')} more than ${max} contacts at one seniority, ` +
      `the most the service returns: the output has the first ${max} of that seniority ` +
      `(--summary lists them${reporter.chatty ? '' : ', and so does --verbose'}).`,
  );
  reporter.details(domains);
}

/** " at cxo, vp" when --seniority narrowed the ask; nothing otherwise. For the empty-result reasons. */
export function atSeniority(seniority: readonly string[] | undefined): string {
  return seniority ? ` at ${seniority.join(', ')}` : '';
}

/**
 * Why contacts that were found were not written (": 3 stale addresses dropped (--stale drop), …");
 * nothing when none was left out.
 */
export function leftOutText(
  droppedStale: number,
  excludedEmails: number,
  filters: { filteredOut: number; undeliverable: number } = { filteredOut: 0, undeliverable: 0 },
): string {
  const why = [
    filters.filteredOut > 0
      ? `${countOf(filters.filteredOut, 'contact')} not matching --department/--title`
      : undefined,
    filters.undeliverable > 0
      ? `${countOf(filters.undeliverable, 'row')} undeliverable (--deliverable-only)`
      : undefined,
    droppedStale > 0
      ? `${countOf(droppedStale, 'stale address', 'stale addresses')} dropped (--stale drop)`
      : undefined,
    excludedEmails > 0 ? `${countOf(excludedEmails, 'contact')} on --exclude-emails` : undefined,
  ].filter((reason) => reason !== undefined);
  return why.length > 0 ? `: ${why.join(', ')}` : '';
}
