/** The entry column of an input, validated and de-duplicated: the domains or addresses to work on. */
import { normalizeDomain } from '../domains.js';
import { checkEmailSyntax, emailKey } from '../emails.js';
import { shortForMessage } from './columns.js';
import type { EntryKind, InputFormat, InputProblem, ParseOptions } from './model.js';
import { SeenKeys } from './seen-keys.js';
import { streamEntryValues, type EntryStreamSink } from './stream.js';

export interface InvalidEntry {
  line: number;
  value: string;
  reason: string;
}

/** Where an entry sits: a line of a file or of stdin, or (given on the command line) an argument. */
export type EntryPlace = 'line' | 'argument';

/** The place of the entries of an input, named as its origin says: arguments are not lines. */
export function entryPlace(origin: string): EntryPlace {
  return origin === 'the command line' ? 'argument' : 'line';
}

/** `line 7: "http//foo" is not a domain (no dot)`; `argument 2: …` for the command line's. */
export function formatInvalidEntry(entry: InvalidEntry, kind: EntryKind, place: EntryPlace = 'line'): string {
  const what = kind === 'domain' ? 'a domain' : 'a valid email address';
  const value = JSON.stringify(shortForMessage(entry.value.trim()));
  return `${place} ${entry.line}: ${value} is not ${what} (${entry.reason})`;
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

  /** True when an accepted entry had this key (a normalised domain, an emailKey); SeenKeys says how sure. */
  hasKey(key: string): boolean {
    return this.seen.has(key);
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

/** The accepted entries of a text as it arrives. */
export async function* streamEntries(
  chunks: AsyncIterable<string>,
  options: ParseOptions,
  collector: EntryCollector,
): AsyncGenerator<string> {
  for await (const { value, line } of streamEntryValues(chunks, options, collector)) {
    const accepted = collector.accept(value, line);
    if (accepted !== null) yield accepted;
  }
}

/** The accepted entries of a text as it arrives, each with its whole row (ParseOptions.keepRecords). */
export async function* streamEntryRows(
  chunks: AsyncIterable<string>,
  options: ParseOptions,
  collector: EntryCollector,
): AsyncGenerator<{ entry: string; record: Record<string, string> }> {
  for await (const { value, line, record } of streamEntryValues(chunks, { ...options, keepRecords: true }, collector)) {
    const accepted = collector.accept(value, line);
    if (accepted !== null) yield { entry: accepted, record: record ?? {} };
  }
}
