/** A JSON document: an array of records or strings, or what prospect writes (`{"data": [...]}`). */
import { isRecord } from '../../util/is-record.js';
import { columnNotFound, findColumn, listColumnName } from './columns.js';
import type { InputFormat, InputProblem, InputRow, InputTable, ParseOptions } from './model.js';
import { characters, inputTooLarge } from './limits.js';
import { firstContentLine, lineAt } from './text.js';

type JsonResult = { ok: true; value: unknown } | { ok: false; error: string; position: number | null };

export function parseJson(text: string): JsonResult {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const position = /position (\d+)/.exec(message)?.[1];
    return { ok: false, error: message, position: position === undefined ? null : Number(position) };
  }
}

/**
 * How deep a JSON text nests, read chunk by chunk (brackets outside strings). JSON.parse takes any
 * depth, but a value nested 10^5 deep overflows the stack when it is turned back into text (cellText).
 */
export class JsonDepth {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The line the text has reached. */
  line = 1;

  constructor(private readonly max: number) {}

  /** Reads a chunk; the line on which the nesting passes `max`, or null. */
  feed(chunk: string): number | null {
    for (let index = 0; index < chunk.length; index += 1) {
      const code = chunk.charCodeAt(index);
      if (code === 0x0a) this.line += 1;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (code === 0x5c) this.escaped = true;
        else if (code === 0x22) this.inString = false;
      } else if (code === 0x22) this.inString = true;
      else if (code === 0x5b || code === 0x7b) {
        this.depth += 1;
        if (this.depth > this.max) return this.line;
      } else if (code === 0x5d || code === 0x7d) this.depth -= 1;
    }
    return null;
  }
}

export function jsonTooDeep(origin: string | undefined, line: number, max: number): Error {
  return inputTooLarge(
    origin,
    `line ${line}`,
    `JSON nested more than ${max} arrays or objects deep`,
    'A record of prospect input is an object of fields; is it the right file?',
  );
}

export function jsonTooLong(origin: string | undefined, line: number, max: number): Error {
  return inputTooLarge(
    origin,
    `line ${line}`,
    `a JSON document longer than ${characters(max)}`,
    'Give a list this large as NDJSON, one record a line (prospect writes it with --format ndjson).',
  );
}

interface JsonValueAt {
  line: number;
  value: unknown;
}

export function jsonTable(text: string, options: ParseOptions): InputTable {
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

export function recordOfText(object: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(object).map(([name, value]) => [name, cellText(value)]));
}

/** Strings as they are, no value as '', anything else (the technologies array) as JSON. */
export function cellText(value: unknown): string {
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
