/** The entry column of an input, validated and de-duplicated: the domains or addresses to work on. */
import { normalizeDomain } from '../domains.js';
import { checkEmailSyntax, emailKey } from '../emails.js';
import { shortForMessage } from './columns.js';
import type { EntryKind, InputFormat, InputProblem, ParseOptions } from './model.js';
import { parseRecords } from './records.js';
import { SeenKeys } from './seen-keys.js';
import { streamEntryValues, type EntryStreamSink } from './stream.js';

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
  const { values, ...rest } = collect(parseEntries(text, { ...options, kind: 'domain' }), domainEntries());
  return { domains: values, ...rest };
}

export function collectEmails(text: string, options: CollectOptions<'email'> = {}): CollectedEmails {
  const { values, ...rest } = collect(parseEntries(text, { ...options, kind: 'email' }), emailEntries());
  return { emails: values, ...rest };
}

/** `line 7: "http//foo" is not a domain (no dot)` */
export function formatInvalidEntry(entry: InvalidEntry, kind: EntryKind): string {
  const what = kind === 'domain' ? 'a domain' : 'a valid email address';
  return `line ${entry.line}: ${JSON.stringify(shortForMessage(entry.value.trim()))} is not ${what} (${entry.reason})`;
}

type Normalized = { ok: true; value: string; key: string } | { ok: false; reason: string };

export function domainEntries(limits?: CollectorLimits): EntryCollector {
  return new EntryCollector((value) => {
    const result = normalizeDomain(value);
    return result.ok ? { ok: true, value: result.domain, key: result.domain } : result;
  }, limits);
}

export function emailEntries(limits?: CollectorLimits): EntryCollector {
  return new EntryCollector((value) => {
    const result = checkEmailSyntax(value);
    return result.ok ? { ok: true, value: result.email, key: emailKey(result.email) } : result;
  }, limits);
}

export interface CollectorLimits {
  /** How many invalid entries and problems to keep for messages; beyond, only their count. */
  kept: number;
}

/**
 * The entry-acceptance point: every entry of an input, whole or streamed, passes `accept` once,
 * in input order, and only what it returns is ever sent. It keeps the invalid entries and the
 * problems for messages (the first `kept` of each, and their counts) and, to tell duplicates, one
 * compact hash per accepted key (SeenKeys): nothing else grows with the input.
 */
export class EntryCollector implements EntryStreamSink {
  readonly invalid: InvalidEntry[] = [];
  invalidCount = 0;
  readonly problems: InputProblem[] = [];
  problemCount = 0;
  duplicates = 0;
  blanks = 0;
  accepted = 0;
  inputFormat: InputFormat = 'lines';
  private readonly seen = new SeenKeys();

  constructor(
    private readonly normalize: (value: string) => Normalized,
    private readonly limits: CollectorLimits = { kept: Infinity },
  ) {}

  /** The entry as it is sent (normalised), or null when it is invalid or was given before. */
  accept(value: string, line: number): string | null {
    const result = this.normalize(value);
    if (!result.ok) {
      this.invalidCount += 1;
      if (this.invalid.length < this.limits.kept) this.invalid.push({ line, value, reason: result.reason });
      return null;
    }
    if (!this.seen.add(result.key)) {
      this.duplicates += 1;
      return null;
    }
    this.accepted += 1;
    return result.value;
  }

  problem(problem: InputProblem): void {
    this.problemCount += 1;
    if (this.problems.length < this.limits.kept) this.problems.push(problem);
  }

  blank(): void {
    this.blanks += 1;
  }

  format(format: InputFormat): void {
    this.inputFormat = format;
  }
}

/** The accepted entries of a text as it arrives (collectDomains and collectEmails, for a stream). */
export async function* streamEntries(chunks: AsyncIterable<string>, options: ParseOptions, collector: EntryCollector): AsyncGenerator<string> {
  for await (const { value, line } of streamEntryValues(chunks, options, collector)) {
    const accepted = collector.accept(value, line);
    if (accepted !== null) yield accepted;
  }
}

function collect(parsed: ParsedEntries, collector: EntryCollector): Collected & { values: string[] } {
  const values: string[] = [];
  for (const { value, line } of parsed.entries) {
    const accepted = collector.accept(value, line);
    if (accepted !== null) values.push(accepted);
  }
  return { values, invalid: collector.invalid, duplicates: collector.duplicates, blanks: parsed.blanks, problems: parsed.problems, format: parsed.format };
}
