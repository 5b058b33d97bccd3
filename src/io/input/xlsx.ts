/**
 * A workbook as input, wherever a CSV is read (`contacts --domains-file accounts.xlsx`, prospect's own
 * `-o list.xlsx`): its first sheet, turned into CSV text, so every reader and message is the CSV one.
 */
import { open } from 'node:fs/promises';
import { stringify } from 'csv-stringify/sync';
import { UsageError } from '../../exit-codes.js';
import type { InputLimits } from './limits.js';
import { checkWorkbookSize } from './xlsx-size.js';

/** A zip file's first bytes ("PK\x03\x04"): what an .xlsx starts with. */
const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];

export function startsLikeZip(bytes: Uint8Array): boolean {
  return ZIP_MAGIC.every((byte, index) => bytes[index] === byte);
}

/** True when the file at `path` is a zip (an .xlsx), told by its first bytes, not its name. */
export async function isZipFile(path: string): Promise<boolean> {
  const handle = await open(path, 'r').catch(() => undefined);
  if (handle === undefined) return false;
  try {
    const head = Buffer.alloc(ZIP_MAGIC.length);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return bytesRead === head.length && startsLikeZip(head);
  } finally {
    await handle.close();
  }
}

/** The first sheet of the workbook at `path`, as CSV text (a header row, then one line a row). */
export async function* workbookAsCsv(
  path: string,
  origin: string,
  limits?: Partial<InputLimits>,
): AsyncGenerator<string> {
  const { default: ExcelJS } = await import('exceljs');
  const workbook = new ExcelJS.Workbook();
  try {
    await checkWorkbookSize(path, origin, limits);
    await workbook.xlsx.readFile(path);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(
      `cannot read ${origin} as an Excel workbook: ${error instanceof Error ? error.message : String(error)}.`,
      'Save it again from Excel as .xlsx, or as "CSV UTF-8".',
    );
  }
  const sheet = workbook.worksheets[0];
  if (sheet === undefined) return;
  const width = sheet.columnCount;
  for (let index = 1; index <= sheet.rowCount; index += 1) {
    const row = sheet.getRow(index);
    const cells = Array.from({ length: width }, (_, column) => cellText(row.getCell(column + 1).value));
    yield stringify([cells]);
  }
}

/** A cell as its text: a hyperlink's text, a formula's result, a date as ISO 8601, rich text joined. */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString();
  if (typeof value !== 'object') return String(value);
  const cell = value as { text?: unknown; result?: unknown; richText?: Array<{ text: string }>; hyperlink?: string };
  if (Array.isArray(cell.richText)) return cell.richText.map((part) => part.text).join('');
  if (cell.text !== undefined) return cellText(cell.text);
  if (cell.result !== undefined) return cellText(cell.result);
  return '';
}
