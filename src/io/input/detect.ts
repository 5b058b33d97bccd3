/** Which format a text is in, told from its first line, so nobody has to say. */
import { normalizeDomain } from '../domains.js';
import { checkEmailSyntax } from '../emails.js';
import { columnCandidates, sameColumn } from './columns.js';
import { firstCsvRecord, guessDelimiter } from './csv.js';
import { isJsonObject, parseJson } from './json.js';
import { unquote } from './lines.js';
import type { EntryKind, InputFormat, ParseOptions } from './model.js';
import { firstContentLine } from './text.js';

export function detectFormat(text: string, options: ParseOptions): InputFormat {
  const first = firstContentLine(text);
  if (first === null) return 'lines';
  if (first.text.startsWith('[') || first.text.startsWith('{')) {
    if (parseJson(text).ok) return 'json';
    // NDJSON is recognised by its first line alone, so that one truncated or broken line later on
    // is reported as that line instead of turning the whole file into junk "domains".
    if (first.text.startsWith('{') && isJsonObject(parseJson(first.text))) return 'ndjson';
    return 'json';
  }
  return looksLikeCsvHeader(first.text, options) ? 'csv' : 'lines';
}

/**
 * A header is a line naming the entry column (alone, or among others), any delimited line when a
 * column was given, or a delimited line none of whose cells is itself an entry - `name,website`
 * is a header whose missing `domain` column deserves a clear message, `acme.com,` is a list.
 */
function looksLikeCsvHeader(line: string, options: ParseOptions): boolean {
  const names = columnCandidates(options);
  const delimiter = guessDelimiter(line);
  if (delimiter === null) return names.some((name) => sameColumn(unquote(line), name));
  if (options.column !== undefined) return true;
  const cells = (firstCsvRecord(line, delimiter)?.cells ?? []).map((cell) => cell.trim());
  if (cells.some((cell) => names.some((name) => sameColumn(cell, name)))) return true;
  return cells.length > 1 && !cells.some((cell) => isValidEntry(cell, options.kind));
}

function isValidEntry(value: string, kind: EntryKind): boolean {
  return kind === 'domain' ? normalizeDomain(value).ok : checkEmailSyntax(value).ok;
}
