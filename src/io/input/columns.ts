/** Which column holds the entries, however the header spells it. */
import { shorten } from '../../util/text.js';
import type { EntryKind, InputProblem, ParseOptions } from './model.js';

const DEFAULT_COLUMNS: Record<EntryKind, readonly string[]> = {
  domain: ['domain'],
  email: ['business_email', 'email'],
};

export function columnCandidates(options: ParseOptions): readonly string[] {
  return options.column === undefined ? (options.columns ?? DEFAULT_COLUMNS[options.kind]) : [options.column];
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
  for (const name of columnCandidates(options)) {
    const found = header.find((column) => sameColumn(column, name));
    if (found !== undefined) return found;
  }
  return null;
}

const MAX_LISTED_COLUMNS = 20;

export function columnNotFound(header: readonly string[], options: ParseOptions, line: number): InputProblem {
  const wanted = columnCandidates(options)
    .map((name) => `"${name}"`)
    .join(' or ');
  const listed = header.slice(0, MAX_LISTED_COLUMNS).map(shortForMessage).join(', ');
  const more = header.length > MAX_LISTED_COLUMNS ? ` and ${header.length - MAX_LISTED_COLUMNS} more` : '';
  const available = header.length === 0 ? '(none)' : `${listed}${more}`;
  return { line, message: `column ${wanted} not found; columns are: ${available}` };
}

/** A header name or a value, as a message quotes it. */
export function shortForMessage(text: string): string {
  return shorten(text, 60, '...');
}
