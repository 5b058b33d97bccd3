/** The entry column of an input, validated and de-duplicated: the domains or addresses to work on. */
import { normalizeDomain } from '../domains.js';
import { checkEmailSyntax, emailKey } from '../emails.js';
import { shortForMessage } from './columns.js';
import type { EntryKind, InputFormat, InputProblem, ParseOptions } from './model.js';
import { parseRecords } from './records.js';

export interface ParsedEntries {
  entries: Array<{ value: string; line: number }>;
  format: InputFormat;
  problems: InputProblem[];
  /** Rows whose entry cell is empty (a contact without an email): skipped, not an error. */
  blanks: number;
}

/** `kind` is implied by the function; callers may still spell it out. */
export type CollectOptions<K extends EntryKind> = Omit<ParseOptions, 'kind'> & { kind?: K };

export interface InvalidEntry {
  line: number;
  value: string;
  reason: string;
}

export interface Collected {
  invalid: InvalidEntry[];
  duplicates: number;
  blanks: number;
  problems: InputProblem[];
  format: InputFormat;
}

export interface CollectedDomains extends Collected {
  /** Normalised, unique, in first-seen order. */
  domains: string[];
}

export interface CollectedEmails extends Collected {
  /** Syntax-checked, unique by `emailKey`, in first-seen order (the first spelling is kept). */
  emails: string[];
}

/** The raw values of the entry column, with their lines; rows with an empty cell are counted. */
export function parseEntries(text: string, options: ParseOptions): ParsedEntries {
  const table = parseRecords(text, options);
  const entries: ParsedEntries['entries'] = [];
  let blanks = 0;
  const { column } = table;
  if (column !== null) {
    for (const row of table.rows) {
      const value = row.record[column] ?? '';
      if (value.trim() === '') blanks += 1;
      else entries.push({ value, line: row.line });
    }
  }
  return { entries, format: table.format, problems: table.problems, blanks };
}

export function collectDomains(text: string, options: CollectOptions<'domain'> = {}): CollectedDomains {
  const { values, ...rest } = collect(parseEntries(text, { ...options, kind: 'domain' }), (value) => {
    const result = normalizeDomain(value);
    return result.ok ? { ok: true, value: result.domain, key: result.domain } : result;
  });
  return { domains: values, ...rest };
}

export function collectEmails(text: string, options: CollectOptions<'email'> = {}): CollectedEmails {
  const { values, ...rest } = collect(parseEntries(text, { ...options, kind: 'email' }), (value) => {
    const result = checkEmailSyntax(value);
    return result.ok ? { ok: true, value: result.email, key: emailKey(result.email) } : result;
  });
  return { emails: values, ...rest };
}

/** `line 7: "http//foo" is not a domain (no dot)` */
export function formatInvalidEntry(entry: InvalidEntry, kind: EntryKind): string {
  const what = kind === 'domain' ? 'a domain' : 'a valid email address';
  return `line ${entry.line}: ${JSON.stringify(shortForMessage(entry.value.trim()))} is not ${what} (${entry.reason})`;
}

type Normalized = { ok: true; value: string; key: string } | { ok: false; reason: string };

function collect(parsed: ParsedEntries, normalize: (value: string) => Normalized): Collected & { values: string[] } {
  const values: string[] = [];
  const seen = new Set<string>();
  const invalid: InvalidEntry[] = [];
  let duplicates = 0;
  for (const { value, line } of parsed.entries) {
    const result = normalize(value);
    if (!result.ok) invalid.push({ line, value, reason: result.reason });
    else if (seen.has(result.key)) duplicates += 1;
    else {
      seen.add(result.key);
      values.push(result.value);
    }
  }
  return { values, invalid, duplicates, blanks: parsed.blanks, problems: parsed.problems, format: parsed.format };
}
