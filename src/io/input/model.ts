/** The shapes every input format is read into: a table of rows with their line numbers. */
import type { InputLimits } from './limits.js';

export type EntryKind = 'domain' | 'email';
export type InputFormat = 'lines' | 'csv' | 'json' | 'ndjson';

/**
 * Part of the input could not be read at all - a column that is not there, broken JSON - as
 * opposed to an entry that is read but invalid. Rows are missing behind it, so callers should
 * stop with a usage error rather than work on part of the list.
 */
export interface InputProblem {
  line: number;
  message: string;
}

export interface InputRow {
  /** 1-based line of the original text where the row starts. */
  line: number;
  record: Record<string, string>;
}

export interface ParseOptions {
  kind: EntryKind;
  /** `--domain-column` / `--email-column`: the column (CSV) or field (JSON) holding the entries. */
  column?: string;
  /** Without `column`: the names the entry column may have, tried in order (a CRM export's spellings). */
  columns?: readonly string[];
  /** Skips detection, e.g. `'lines'` for command-line arguments. */
  format?: InputFormat;
  /**
   * The flag that names the entry column (`--domain-column`): messages name it, and a header with
   * several CRM names for the column is refused as ambiguous instead of read by the first.
   */
  columnFlag?: string;
  /** Each entry keeps its whole row (`contacts --keep-columns`); otherwise only the entry column is read. */
  keepRecords?: boolean;
  /** For messages: the file name, `standard input` or `the command line`. */
  origin?: string;
  /** Smaller limits than INPUT_LIMITS (limits.ts), for tests. */
  limits?: Partial<InputLimits>;
}

export interface InputTable {
  format: InputFormat;
  /** Column names in input order; for JSON, every field seen, in first-seen order. */
  header: string[];
  /** The header's spelling of the column holding the entries; null when it was not found. */
  column: string | null;
  rows: InputRow[];
  problems: InputProblem[];
}

export function formatProblem(problem: InputProblem): string {
  return `line ${problem.line}: ${problem.message}`;
}
