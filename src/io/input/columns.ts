/** Which column holds the entries, however the header spells it. */
import { shorten } from '../../util/text.js';
import type { EntryKind, InputProblem, ParseOptions } from './model.js';

/** prospect's own names for the entry column: a header that has one is never ambiguous. */
const OWN_COLUMNS: Record<EntryKind, readonly string[]> = {
  domain: ['domain'],
  email: ['business_email', 'email'],
};

/**
 * The names CRM exports give the entry column, the one list every input reads (contacts, verify and
 * the exclusion lists): HubSpot's and Salesforce's exports say Website, Company Domain Name, Website
 * URL, Email Address. Spelling is free: `Website`, `WEBSITE` and `website` are one column.
 */
const EXPORT_COLUMNS: Record<EntryKind, readonly string[]> = {
  domain: ['website', 'company_domain_name', 'company_domain', 'website_url', 'url'],
  email: ['email_address', 'e_mail', 'work_email'],
};

export function columnCandidates(options: ParseOptions): readonly string[] {
  if (options.column !== undefined) return [options.column];
  return options.columns ?? [...OWN_COLUMNS[options.kind], ...EXPORT_COLUMNS[options.kind]];
}

/**
 * With `columnFlag`, a header without prospect's own name but with two or more of a CRM's is
 * ambiguous (Website and Company Domain Name): the run stops and asks which, rather than guess.
 */
function ambiguousColumns(header: readonly string[], options: ParseOptions): string[] {
  if (options.column !== undefined || options.columns !== undefined || options.columnFlag === undefined) return [];
  if (OWN_COLUMNS[options.kind].some((name) => header.some((column) => sameColumn(column, name)))) return [];
  return header.filter((column) => EXPORT_COLUMNS[options.kind].some((name) => sameColumn(column, name)));
}

/** The name a plain list's single column gets, so every format has a header. */
export function listColumnName(options: ParseOptions): string {
  return options.column ?? (options.kind === 'domain' ? 'domain' : 'email');
}

/** `Business Email`, `business-email` and `BUSINESS_EMAIL` all name the `business_email` column. */
export function sameColumn(a: string, b: string): boolean {
  const canonical = (name: string): string =>
    name
      .trim()
      .toLowerCase()
      .replace(/[\s_-]+/g, '_');
  return canonical(a) === canonical(b);
}

export function findColumn(header: readonly string[], options: ParseOptions): string | null {
  if (ambiguousColumns(header, options).length > 1) return null;
  for (const name of columnCandidates(options)) {
    const found = header.find((column) => sameColumn(column, name));
    if (found !== undefined) return found;
  }
  return null;
}

const MAX_LISTED_COLUMNS = 20;

export function columnNotFound(header: readonly string[], options: ParseOptions, line: number): InputProblem {
  const ambiguous = ambiguousColumns(header, options);
  const which = `name the one to read with ${options.columnFlag} NAME`;
  if (ambiguous.length > 1) {
    const named = ambiguous.map((column) => `"${shortForMessage(column)}"`).join(', ');
    return { line, message: `more than one column could hold the ${options.kind}: ${named}; ${which}` };
  }
  const wanted = columnCandidates(options)
    .map((name) => `"${name}"`)
    .join(' or ');
  const listed = header.slice(0, MAX_LISTED_COLUMNS).map(shortForMessage).join(', ');
  const more = header.length > MAX_LISTED_COLUMNS ? ` and ${header.length - MAX_LISTED_COLUMNS} more` : '';
  const available = header.length === 0 ? '(none)' : `${listed}${more}`;
  const hint = options.columnFlag === undefined ? '' : `; ${which}`;
  return { line, message: `column ${wanted} not found; columns are: ${available}${hint}` };
}

/** A header name or a value, as a message quotes it. */
export function shortForMessage(text: string): string {
  return shorten(text, 60, '...');
}
