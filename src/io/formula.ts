/**
 * Spreadsheet formula injection: a cell that starts with one of these characters is run as a
 * formula by Excel, LibreOffice or Google Sheets. csv-stringify's `escape_formulas` misses a leading
 * LF, so the rule lives here, once, and covers the whole OWASP list plus the full-width variants.
 */
const FORMULA_TRIGGERS = new Set(['=', '+', '-', '@', '\t', '\r', '\n', '\uFF1D', '\uFF0B', '\uFF0D', '\uFF20']);

/** Prefixes a single quote, which every spreadsheet reads as "this cell is text". */
export function neutralizeFormula(cell: string): string {
  return cell.length > 0 && FORMULA_TRIGGERS.has(cell[0]!) ? `'${cell}` : cell;
}
