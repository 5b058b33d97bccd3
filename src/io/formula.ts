/**
 * Spreadsheet formula injection: a cell that starts with one of these characters is run as a
 * formula by Excel, LibreOffice or Google Sheets. csv-stringify's `escape_formulas` misses a leading
 * LF, so the rule lives here, once, and covers the whole OWASP list plus the full-width variants.
 */
const FORMULA_TRIGGERS = new Set(['=', '+', '-', '@', '\t', '\r', '\n', '\uFF1D', '\uFF0B', '\uFF0D', '\uFF20']);

/**
 * An international phone number (`+27 21 485 9682`, `+1 (415) 555-0100`): digits, spaces and
 * `( ) - .` after a leading `+`, at least six digits. Without a letter it can name no function, cell or
 * program, so it cannot run anything; guarding it only put a `'` in front of every phone number
 * (LibreOffice shows it).
 */
const PHONE_NUMBER = /^\+(?=(?:[\s().-]*\d){6})[\d\s().-]+$/;

/** Prefixes a single quote, which every spreadsheet reads as "this cell is text". */
export function neutralizeFormula(cell: string): string {
  if (cell.length === 0 || !FORMULA_TRIGGERS.has(cell[0]!)) return cell;
  return PHONE_NUMBER.test(cell) ? cell : `'${cell}`;
}
