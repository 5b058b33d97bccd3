/** CSV (or TSV, or semicolon-separated) with a header row, read by csv-parse. */
import { parse as parseCsv, type Options as CsvOptions } from 'csv-parse/sync';
import { neutralizeFormula } from '../formula.js';
import { formatCount } from '../../ui/format-count.js';
import { inputTooLarge } from './limits.js';
import type { InputProblem, InputRow } from './model.js';

// The most frequent wins; on a tie the earlier one, as a tab in a header is never an accident.
const DELIMITERS = ['\t', ',', ';'] as const;

export function guessDelimiter(line: string): string | null {
  let best: string | null = null;
  let bestCount = 0;
  const unquoted = line.replace(/"[^"]*"/g, '');
  for (const delimiter of DELIMITERS) {
    const count = unquoted.split(delimiter).length - 1;
    if (count > bestCount) [best, bestCount] = [delimiter, count];
  }
  return best;
}

/** Spreadsheet exports as they come: stray quotes, ragged rows, blank lines and empty rows are read past. */
const TOLERANT = {
  relax_quotes: true,
  relax_column_count: true,
  skip_empty_lines: true,
  skip_records_with_empty_values: true,
  skip_records_with_error: true,
} satisfies CsvOptions;

export interface CsvRecord {
  /** Where the record starts: a quoted cell may span lines. */
  line: number;
  cells: string[];
}

/** The first record csv-parse reads, past blank lines and rows of empty cells; the rest is not parsed. */
export function firstCsvRecord(text: string, delimiter: string): CsvRecord | null {
  let first: CsvRecord | null = null;
  parseCsv(text, {
    ...TOLERANT,
    delimiter,
    to: 1,
    on_record: (cells: string[], context) => {
      first = { line: context.lines - countNewlines(cells.join('')), cells };
      return null;
    },
  });
  return first;
}

/**
 * csv-parse's options for reading records with their lines as a stream (stream.ts): each row goes
 * to `onRow`, each unreadable record to `onProblem`.
 * `headerLine` is where the header record starts (firstCsvRecord), for a problem before any row.
 */
export function csvRecordReader(
  delimiter: string,
  headerLine: number | undefined,
  onRow: (row: InputRow) => void,
  onProblem: (problem: InputProblem) => void,
  { maxRecordBytes, origin }: { maxRecordBytes: number; origin: string | undefined },
) {
  let header: string[] = [];
  let lastRowLine: number | undefined;
  let fatal: Error | undefined;
  const options = {
    ...TOLERANT,
    delimiter,
    max_record_size: maxRecordBytes,
    // Cells beyond the header are dropped, as spreadsheets do; short rows get empty cells below.
    // No `cast` (for the formula escapes): with it, csv-parse leaves the cells beyond the header
    // uncast and then skips a row with text only there as empty, where it is a row without an entry.
    columns: (names: string[]) => (header = uniqueNames(names.map((name) => name.trim()))),
    raw: true,
    on_record: ({ record, raw }: { record: Record<string, string>; raw: string }, context: { lines: number }) => {
      const cells = header.map((name): [string, string] => [
        name,
        Object.hasOwn(record, name) ? unescapeFormula(record[name]!) : '',
      ]);
      lastRowLine = context.lines - countNewlines(recordText(raw));
      onRow({ line: lastRowLine, record: Object.fromEntries(cells) });
      return null;
    },
    on_skip: (error: { code?: string } | undefined) => {
      // csv-parse does not say where an unreadable record starts: just after the last one read.
      const line = (lastRowLine ?? (header.length > 0 ? (headerLine ?? 0) : 0)) + 1;
      // Thrown, csv-parse ends the parse with it: the record is not read further.
      if (error?.code === 'CSV_MAX_RECORD_SIZE') throw (fatal = recordTooLong(origin, line, maxRecordBytes));
      onProblem({ line, message: csvErrorMessage(error?.code) });
      return undefined;
    },
  };
  return {
    options,
    get header(): string[] {
      return header;
    },
    /** The error that ended the parse, known as soon as write() returns (the stream emits it later). */
    get fatal(): Error | undefined {
      return fatal;
    },
  };
}

function recordTooLong(origin: string | undefined, line: number, max: number): Error {
  return inputTooLarge(
    origin,
    `line ${line}`,
    `a CSV record longer than ${formatCount(max)} bytes`,
    'A quote that is never closed makes the rest of a file one field; is it the right file?',
  );
}

function csvErrorMessage(code: string | undefined): string {
  return code === 'CSV_QUOTE_NOT_CLOSED'
    ? 'a quoted field is never closed, so the rest of the file could not be read'
    : `the CSV could not be read here (${code ?? 'unknown error'})`;
}

/**
 * A record's own text: csv-parse's `raw` also holds the blank lines skipped before it and the line
 * break that ends it. Its line breaks move the record's start back from where it ends (`lines`).
 */
function recordText(raw: string): string {
  return raw.replace(/^\n+/, '').replace(/\n$/, '');
}

function countNewlines(text: string): number {
  return text.split('\n').length - 1;
}

// prospect's CSV writers prefix a `'` to cells a spreadsheet would run as formulas; reading our
// own files back undoes exactly that rule, so a round trip through `prospect verify` is stable.
function unescapeFormula(cell: string): string {
  return cell.startsWith("'") && neutralizeFormula(cell.slice(1)) === cell ? cell.slice(1) : cell;
}

/** Empty and repeated header names get distinct names, so no cell is lost in a record. */
function uniqueNames(names: readonly string[]): string[] {
  const seen = new Set<string>();
  return names.map((name, index) => {
    const base = name === '' ? `column_${index + 1}` : name;
    let unique = base;
    for (let suffix = 2; seen.has(unique); suffix += 1) unique = `${base}_${suffix}`;
    seen.add(unique);
    return unique;
  });
}
