/**
 * Reading the domains or email addresses users really have - a pasted list, a spreadsheet export,
 * the output of `prospect companies` in any format - without asking them which it is. Every format
 * becomes one table of rows with their line numbers.
 */
import { csvTable } from './csv.js';
import { detectFormat } from './detect.js';
import { jsonTable } from './json.js';
import { linesTable } from './lines.js';
import type { InputTable, ParseOptions } from './model.js';
import { ndjsonTable } from './ndjson.js';
import { normalizeText } from './text.js';

/** The whole input as rows (what `prospect verify` writes back out, with its columns added). */
export function parseRecords(text: string, options: Partial<ParseOptions> = {}): InputTable {
  const resolved: ParseOptions = { ...options, kind: options.kind ?? 'email' };
  const clean = normalizeText(text);
  switch (resolved.format ?? detectFormat(clean, resolved)) {
    case 'json':
      return jsonTable(clean, resolved);
    case 'ndjson':
      return ndjsonTable(clean, resolved);
    case 'csv':
      return csvTable(clean, resolved);
    case 'lines':
      return linesTable(clean, resolved);
  }
}
