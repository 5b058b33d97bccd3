import { readFile } from 'node:fs/promises';
import { parse as parseCsv } from 'csv-parse/sync';
import { UsageError } from '../exit-codes.js';
import { normalizeDomain } from './domains.js';
import { checkEmailSyntax, emailKey } from './emails.js';
import { neutralizeFormula } from './formula.js';

/**
 * Reading the domains or email addresses users really have - a pasted list, a spreadsheet export,
 * the output of `prospect companies` in any format - without asking them which it is.
 *
 * One parser (`parseRecords`) turns every format into a table of rows with their line numbers;
 * `parseEntries` takes one column out of it and `collectDomains` / `collectEmails` validate it.
 */

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
  /** Skips detection, e.g. `'lines'` for command-line arguments. */
  format?: InputFormat;
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

export interface ParsedEntries {
  entries: Array<{ value: string; line: number }>;
  format: InputFormat;
  problems: InputProblem[];
  /** Rows whose entry cell is empty (a contact without an email): skipped, not an error. */
  blanks: number;
}

/** `kind` is implied by the function; callers may still spell it out. */
export type CollectOptions<K extends EntryKind> = Omit<ParseOptions, 'kind'> & { kind?: K };

export interface InvalidEntry {
  line: number;
  value: string;
  reason: string;
}

export interface Collected {
  invalid: InvalidEntry[];
  duplicates: number;
  blanks: number;
  problems: InputProblem[];
  format: InputFormat;
}

export interface CollectedDomains extends Collected {
  /** Normalised, unique, in first-seen order. */
  domains: string[];
}

export interface CollectedEmails extends Collected {
  /** Syntax-checked, unique by `emailKey`, in first-seen order (the first spelling is kept). */
  emails: string[];
}

export interface InputText {
  text: string;
  /** For messages: a file name, `standard input` or `the command line`. */
  origin: string;
  /** Set when the source has one format whatever it looks like (arguments are always lines). */
  format?: InputFormat;
}

export interface InputSource {
  args?: readonly string[];
  /** A path, or `-` for standard input. */
  file?: string;
  stdin?: NodeJS.ReadableStream;
}

// ---------------------------------------------------------------------------------------------
// Public API

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

/** The raw values of the entry column, with their lines; rows with an empty cell are counted. */
export function parseEntries(text: string, options: ParseOptions): ParsedEntries {
  const table = parseRecords(text, options);
  const entries: ParsedEntries['entries'] = [];
  let blanks = 0;
  const { column } = table;
  if (column !== null) {
    for (const row of table.rows) {
      const value = row.record[column] ?? '';
      if (value.trim() === '') blanks += 1;
      else entries.push({ value, line: row.line });
    }
  }
  return { entries, format: table.format, problems: table.problems, blanks };
}

export function collectDomains(text: string, options: CollectOptions<'domain'> = {}): CollectedDomains {
  const { values, ...rest } = collect(parseEntries(text, { ...options, kind: 'domain' }), (value) => {
    const result = normalizeDomain(value);
    return result.ok ? { ok: true, value: result.domain, key: result.domain } : result;
  });
  return { domains: values, ...rest };
}

export function collectEmails(text: string, options: CollectOptions<'email'> = {}): CollectedEmails {
  const { values, ...rest } = collect(parseEntries(text, { ...options, kind: 'email' }), (value) => {
    const result = checkEmailSyntax(value);
    return result.ok ? { ok: true, value: result.email, key: emailKey(result.email) } : result;
  });
  return { emails: values, ...rest };
}

/** `line 7: "http//foo" is not a domain (no dot)` */
export function formatInvalidEntry(entry: InvalidEntry, kind: EntryKind): string {
  const what = kind === 'domain' ? 'a domain' : 'a valid email address';
  return `line ${entry.line}: ${JSON.stringify(shorten(entry.value.trim()))} is not ${what} (${entry.reason})`;
}

export function formatProblem(problem: InputProblem): string {
  return `line ${problem.line}: ${problem.message}`;
}

/**
 * The input text of a command: its arguments (one entry each), else `file`, else standard input
 * when it is piped. Null when there is nothing to read, so the command can say what it expected.
 */
export async function readInputText(source: InputSource): Promise<InputText | null> {
  const args = source.args ?? [];
  if (args.length > 0 && source.file !== undefined) {
    throw new UsageError('give the entries either as arguments or in a file, not both');
  }
  if (args.length > 0) return { text: args.join('\n'), origin: 'the command line', format: 'lines' };
  if (source.file !== undefined && source.file !== '-') {
    return { text: await readTextFile(source.file), origin: source.file };
  }
  const stdin = source.stdin;
  // A terminal on stdin means nobody piped anything: waiting for typed input would look like a hang.
  if (stdin === undefined || (source.file === undefined && isTerminal(stdin))) return null;
  return { text: await readStream(stdin), origin: 'standard input' };
}

/** Reads a UTF-8 file; a missing or unreadable file is the user's to fix, so a usage error. */
export async function readTextFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${fileErrorReason(error)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Detection

const BOM = '\uFEFF';

/** No BOM, and `\n` for CRLF and lone CR alike, so line numbers match what an editor shows. */
function normalizeText(text: string): string {
  const withoutBom = text.startsWith(BOM) ? text.slice(1) : text;
  return withoutBom.replace(/\r\n?/g, '\n');
}

function detectFormat(text: string, options: ParseOptions): InputFormat {
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
  const cells = splitHeader(line, delimiter);
  if (cells.some((cell) => names.some((name) => sameColumn(cell, name)))) return true;
  return cells.length > 1 && !cells.some((cell) => isValidEntry(cell, options.kind));
}

function isValidEntry(value: string, kind: EntryKind): boolean {
  return kind === 'domain' ? normalizeDomain(value).ok : checkEmailSyntax(value).ok;
}

// ---------------------------------------------------------------------------------------------
// Columns

const DEFAULT_COLUMNS: Record<EntryKind, readonly string[]> = {
  domain: ['domain'],
  email: ['business_email', 'email'],
};

function columnCandidates(options: ParseOptions): readonly string[] {
  return options.column === undefined ? DEFAULT_COLUMNS[options.kind] : [options.column];
}

/** The name a plain list's single column gets, so every format has a header. */
function listColumnName(options: ParseOptions): string {
  return options.column ?? (options.kind === 'domain' ? 'domain' : 'email');
}

/** `Business Email`, `business-email` and `BUSINESS_EMAIL` all name the `business_email` column. */
function sameColumn(a: string, b: string): boolean {
  const canonical = (name: string): string => name.trim().toLowerCase().replace(/[\s_-]+/g, '_');
  return canonical(a) === canonical(b);
}

function findColumn(header: readonly string[], options: ParseOptions): string | null {
  for (const name of columnCandidates(options)) {
    const found = header.find((column) => sameColumn(column, name));
    if (found !== undefined) return found;
  }
  return null;
}

const MAX_LISTED_COLUMNS = 20;

function columnNotFound(header: readonly string[], options: ParseOptions, line: number): InputProblem {
  const wanted = columnCandidates(options).map((name) => `"${name}"`).join(' or ');
  const listed = header.slice(0, MAX_LISTED_COLUMNS).map(shorten).join(', ');
  const more = header.length > MAX_LISTED_COLUMNS ? ` and ${header.length - MAX_LISTED_COLUMNS} more` : '';
  const available = header.length === 0 ? '(none)' : `${listed}${more}`;
  return { line, message: `column ${wanted} not found; columns are: ${available}` };
}

// ---------------------------------------------------------------------------------------------
// Plain lines

function linesTable(text: string, options: ParseOptions): InputTable {
  const column = listColumnName(options);
  const rows: InputRow[] = [];
  text.split('\n').forEach((raw, index) => {
    const value = cleanListLine(raw);
    if (value !== '') rows.push({ line: index + 1, record: { [column]: value } });
  });
  return { format: 'lines', header: [column], column, rows, problems: [] };
}

/** Tolerates `# comments` (whole-line or after a space), surrounding quotes and trailing commas. */
function cleanListLine(raw: string): string {
  const line = raw.trim();
  if (line.startsWith('#')) return '';
  const withoutComment = line.replace(/\s+#.*$/, '');
  return unquote(withoutComment.replace(/[,;]+$/, ''));
}

function unquote(text: string): string {
  const trimmed = text.trim();
  const quoted = /^(["'])(.*)\1$/s.exec(trimmed);
  return quoted === null ? trimmed : (quoted[2] ?? '').trim();
}

// ---------------------------------------------------------------------------------------------
// CSV

// The most frequent wins; on a tie the earlier one, as a tab in a header is never an accident.
const DELIMITERS = ['\t', ',', ';'] as const;

function guessDelimiter(line: string): string | null {
  let best: string | null = null;
  let bestCount = 0;
  const unquoted = line.replace(/"[^"]*"/g, '');
  for (const delimiter of DELIMITERS) {
    const count = unquoted.split(delimiter).length - 1;
    if (count > bestCount) [best, bestCount] = [delimiter, count];
  }
  return best;
}

function splitHeader(line: string, delimiter: string): string[] {
  return (parseCsvRows(line, delimiter).rows[0]?.cells ?? []).map((cell) => cell.trim());
}

function csvTable(text: string, options: ParseOptions): InputTable {
  const first = firstContentLine(text);
  const delimiter = (first && guessDelimiter(first.text)) ?? ',';
  const parsed = parseCsvRows(text, delimiter);
  const [headerRow, ...dataRows] = parsed.rows;
  const header = uniqueNames((headerRow?.cells ?? []).map((cell) => cell.trim()));
  const column = findColumn(header, options);
  const problems = [...parsed.problems];
  // Short rows get empty cells and cells beyond the header are dropped, as spreadsheets do.
  if (column === null) problems.unshift(columnNotFound(header, options, headerRow?.line ?? 1));
  const rows = dataRows.map(({ line, cells }) => ({
    line,
    record: Object.fromEntries(header.map((name, index) => [name, unescapeFormula(cells[index] ?? '')])),
  }));
  return { format: 'csv', header, column, rows, problems };
}

interface CsvRow {
  line: number;
  cells: string[];
}

function parseCsvRows(text: string, delimiter: string): { rows: CsvRow[]; problems: InputProblem[] } {
  const rows: CsvRow[] = [];
  const problems: InputProblem[] = [];
  parseCsv(text, {
    delimiter,
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_empty_values: true,
    skip_records_with_error: true,
    // `context.lines` is where a record ends; a quoted cell spanning lines moves its start back.
    on_record: (cells: string[], context) => {
      rows.push({ line: context.lines - countNewlines(cells), cells });
      return null;
    },
    on_skip: (error) => {
      const line = (rows[rows.length - 1]?.line ?? 0) + 1;
      problems.push({ line, message: csvErrorMessage(error?.code) });
      return undefined;
    },
  });
  return { rows, problems };
}

function csvErrorMessage(code: string | undefined): string {
  return code === 'CSV_QUOTE_NOT_CLOSED'
    ? 'a quoted field is never closed, so the rest of the file could not be read'
    : `the CSV could not be read here (${code ?? 'unknown error'})`;
}

function countNewlines(cells: readonly string[]): number {
  return cells.reduce((sum, cell) => sum + cell.split('\n').length - 1, 0);
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

// ---------------------------------------------------------------------------------------------
// JSON and NDJSON

type JsonResult = { ok: true; value: unknown } | { ok: false; error: string; position: number | null };

function parseJson(text: string): JsonResult {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const position = /position (\d+)/.exec(message)?.[1];
    return { ok: false, error: message, position: position === undefined ? null : Number(position) };
  }
}

function isJsonObject(result: JsonResult): boolean {
  return result.ok && isRecord(result.value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

interface JsonValueAt {
  line: number;
  value: unknown;
}

function jsonTable(text: string, options: ParseOptions): InputTable {
  const parsed = parseJson(text);
  const firstLine = firstContentLine(text)?.line ?? 1;
  if (!parsed.ok) {
    const line = parsed.position === null ? firstLine : lineAt(text, parsed.position);
    return emptyJsonTable([{ line, message: `not valid JSON (${parsed.error})` }]);
  }
  const elements = recordElements(parsed.value);
  if (elements === null) {
    const message = 'expected a JSON array, or an object with a "data" array (what prospect writes)';
    return emptyJsonTable([{ line: firstLine, message }]);
  }
  const lines = recordArrayLines(text);
  const values = elements.map((value, index) => ({ value, line: lines[index] ?? firstLine }));
  return tableFromJsonValues('json', values, options);
}

/** The records of a JSON document: an array, the `data` array of an envelope, or one object. */
function recordElements(value: unknown): unknown[] | null {
  if (Array.isArray(value)) return value;
  if (!isRecord(value)) return null;
  return Array.isArray(value['data']) ? (value['data'] as unknown[]) : [value];
}

function ndjsonTable(text: string, options: ParseOptions): InputTable {
  const values: JsonValueAt[] = [];
  const problems: InputProblem[] = [];
  text.split('\n').forEach((raw, index) => {
    if (raw.trim() === '') return;
    const parsed = parseJson(raw);
    if (parsed.ok) values.push({ line: index + 1, value: parsed.value });
    else problems.push({ line: index + 1, message: `not valid JSON (${parsed.error})` });
  });
  const table = tableFromJsonValues('ndjson', values, options);
  return { ...table, problems: [...problems, ...table.problems].sort((a, b) => a.line - b.line) };
}

/** Objects become rows of their fields (as text); bare strings become the entry itself. */
function tableFromJsonValues(format: InputFormat, values: readonly JsonValueAt[], options: ParseOptions): InputTable {
  const objects = values.filter((item) => isRecord(item.value));
  const header = uniqueFieldNames(objects.map((item) => item.value as Record<string, unknown>));
  const objectColumn = findColumn(header, options);
  const column = objectColumn ?? (objects.length === 0 ? listColumnName(options) : null);
  const rows: InputRow[] = [];
  const problems: InputProblem[] = [];
  if (column === null) problems.push(columnNotFound(header, options, objects[0]?.line ?? 1));
  for (const { line, value } of values) {
    if (isRecord(value)) rows.push({ line, record: recordOfText(value) });
    else if (typeof value === 'string' && column !== null) rows.push({ line, record: { [column]: value } });
    else if (typeof value !== 'string') problems.push({ line, message: 'expected a JSON object or string' });
  }
  const fullHeader = column !== null && !header.includes(column) ? [column, ...header] : header;
  return { format, header: fullHeader, column, rows, problems };
}

function uniqueFieldNames(objects: ReadonlyArray<Record<string, unknown>>): string[] {
  const names = new Set<string>();
  for (const object of objects) for (const name of Object.keys(object)) names.add(name);
  return [...names];
}

function recordOfText(object: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(object).map(([name, value]) => [name, cellText(value)]));
}

/** Strings as they are, no value as '', anything else (the technologies array) as JSON. */
function cellText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? '';
}

/**
 * The line on which each element of the records array starts: the top-level array, or the
 * `data` array of a top-level object. JSON.parse forgets positions, so this scans for them.
 */
function recordArrayLines(text: string): number[] {
  const lines: number[] = [];
  const stack: string[] = [];
  let line = 1;
  let inString = false;
  let escaped = false;
  let stringStart = 0;
  let lastString = '';
  let lastKey = '';
  let targetDepth = -1;
  let expectElement = false;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index];
    if (character === '\n') line += 1;
    if (inString) {
      if (escaped) escaped = false;
      else if (character === '\\') escaped = true;
      else if (character === '"') [inString, lastString] = [false, text.slice(stringStart + 1, index)];
      continue;
    }
    if (character === undefined || isJsonWhitespace(character)) continue;
    if (expectElement && character !== ']') lines.push(line);
    expectElement = false;
    if (character === '"') [inString, stringStart] = [true, index];
    else if (character === ':' && stack.length === 1) lastKey = lastString;
    else if (character === ',' && stack.length === targetDepth) expectElement = true;
    else if (character === '[' || character === '{') {
      stack.push(character);
      const isRootArray = stack.length === 1 && character === '[';
      const isDataArray = stack.length === 2 && stack[0] === '{' && character === '[' && lastKey === 'data';
      if (isRootArray || isDataArray) [targetDepth, expectElement, lines.length] = [stack.length, true, 0];
    } else if (character === ']' || character === '}') {
      if (stack.length === targetDepth) targetDepth = -1;
      stack.pop();
    }
  }
  return lines;
}

function isJsonWhitespace(character: string): boolean {
  return character === ' ' || character === '\n' || character === '\t' || character === '\r';
}

function emptyJsonTable(problems: InputProblem[]): InputTable {
  return { format: 'json', header: [], column: null, rows: [], problems };
}

// ---------------------------------------------------------------------------------------------
// Validation and de-duplication

type Normalized = { ok: true; value: string; key: string } | { ok: false; reason: string };

function collect(parsed: ParsedEntries, normalize: (value: string) => Normalized): Collected & { values: string[] } {
  const values: string[] = [];
  const seen = new Set<string>();
  const invalid: InvalidEntry[] = [];
  let duplicates = 0;
  for (const { value, line } of parsed.entries) {
    const result = normalize(value);
    if (!result.ok) invalid.push({ line, value, reason: result.reason });
    else if (seen.has(result.key)) duplicates += 1;
    else {
      seen.add(result.key);
      values.push(result.value);
    }
  }
  return { values, invalid, duplicates, blanks: parsed.blanks, problems: parsed.problems, format: parsed.format };
}

// ---------------------------------------------------------------------------------------------
// Small helpers

function firstContentLine(text: string): { line: number; text: string } | null {
  const lines = text.split('\n');
  const index = lines.findIndex((line) => line.trim() !== '');
  return index === -1 ? null : { line: index + 1, text: (lines[index] ?? '').trim() };
}

function lineAt(text: string, position: number): number {
  return text.slice(0, position).split('\n').length;
}

function shorten(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function isTerminal(stream: NodeJS.ReadableStream): boolean {
  return 'isTTY' in stream && stream.isTTY === true;
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  // Decoding once at the end keeps a multi-byte character split across chunks intact.
  return Buffer.concat(chunks).toString('utf8');
}

function fileErrorReason(error: unknown): string {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'it is a directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return error instanceof Error ? error.message : String(error);
}
