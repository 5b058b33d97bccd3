/** Which format a text is in, told from its first line, so nobody has to say. */
import { normalizeDomain } from '../domains.js';
import { checkEmailSyntax } from '../emails.js';
import { columnCandidates, sameColumn } from './columns.js';
import { firstCsvRecord, guessDelimiter } from './csv.js';
import { isRecord } from '../../util/is-record.js';
import { parseJson } from './json.js';
import { unquote } from './lines.js';
import type { EntryKind, InputFormat, ParseOptions } from './model.js';

/**
 * The format told from the first non-blank line alone (trimmed; null when there is none), which
 * is all a stream has before it must start.
 */
export function detectFromFirstLine(first: string | null, options: ParseOptions): InputFormat {
  if (first === null) return 'lines';
  if (first.startsWith('[')) return 'json';
  if (first.startsWith('{')) {
    // NDJSON is recognised by its first line alone, so that one truncated or broken line later on
    // is reported as that line instead of turning the whole file into junk "domains". A first line
    // holding a whole `{"data": [...]}` document (what prospect's JSON writer could put on one
    // line) is that document, not one record.
    const parsed = parseJson(first);
    return parsed.ok && isRecord(parsed.value) && !Array.isArray(parsed.value['data']) ? 'ndjson' : 'json';
  }
  return looksLikeCsvHeader(first, options) ? 'csv' : 'lines';
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
