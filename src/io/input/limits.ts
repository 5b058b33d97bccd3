/**
 * The largest pieces of input prospect reads, so that no file costs hours or gigabytes: each is far
 * past anything a list, a CRM export or prospect's own output holds, and each is refused (exit 2,
 * naming the file, the line and the limit) as soon as it is passed, before the piece is held.
 */
import { UsageError } from '../../exit-codes.js';
import { formatCount } from '../../ui/format-count.js';

export interface InputLimits {
  /** Characters in one line of a list or of NDJSON (and the first line, which tells the format). */
  lineChars: number;
  /** Bytes (UTF-8) of one CSV record: csv-parse's `max_record_size` (a quoted field may span lines). */
  csvRecordBytes: number;
  /** Characters in a JSON document, which is read whole (NDJSON is the shape to stream). */
  jsonChars: number;
  /** Nesting of arrays and objects in a JSON document or an NDJSON line. */
  jsonDepth: number;
  /** Bytes an .xlsx unzips to, all its parts together (exceljs holds them all, several times over). */
  workbookBytes: number;
  /** Unzipped to zipped bytes of one part past 1 MiB: a sheet of text zips 10:1, a zip bomb 1000:1. */
  workbookRatio: number;
}

const MIB = 1024 * 1024;

export const INPUT_LIMITS: InputLimits = {
  lineChars: MIB,
  csvRecordBytes: MIB,
  jsonChars: 64 * MIB,
  jsonDepth: 64,
  workbookBytes: 256 * MIB,
  workbookRatio: 1000,
};

export function limitsOf(given: Partial<InputLimits> | undefined): InputLimits {
  return given === undefined ? INPUT_LIMITS : { ...INPUT_LIMITS, ...given };
}

/** `accounts.txt line 3: a line longer than 1,048,576 characters ...`, exit 2. */
export function inputTooLarge(origin: string | undefined, where: string, what: string, hint: string): UsageError {
  return new UsageError(
    `${origin ?? 'the input'} ${where}: ${what}, more than prospect reads; nothing more was read.`,
    hint,
  );
}

export function characters(count: number): string {
  return `${formatCount(count)} characters`;
}

export const IS_IT_THE_RIGHT_FILE = 'Is it the right file? A list holds one domain or address a line.';
