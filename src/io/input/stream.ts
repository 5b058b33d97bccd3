/**
 * An input read as it arrives, so `companies | contacts` works on the first companies while the
 * export goes on, and a list of any size is never held whole: the format is told from the first
 * non-blank line (the text read so far is replayed), then each format hands out its rows one by one.
 */
import { parse as csvParser } from 'csv-parse';
import { columnNotFound, findColumn, listColumnName } from './columns.js';
import { csvRecordReader, firstCsvRecord, guessDelimiter } from './csv.js';
import { detectFromFirstLine } from './detect.js';
import { JsonDepth, jsonTable, jsonTooDeep, jsonTooLong } from './json.js';
import { listRow } from './lines.js';
import { characters, inputTooLarge, IS_IT_THE_RIGHT_FILE, limitsOf } from './limits.js';
import type { InputFormat, InputProblem, InputRow, ParseOptions } from './model.js';
import { NdjsonLineReader } from './ndjson.js';

/** What a stream of entries reports besides the entries: rows it could not read, rows without one. */
export interface EntryStreamSink {
  problem(problem: InputProblem): void;
  /** A row whose entry cell is empty (a contact without an email): skipped, not an error. */
  blank(): void;
  /** The format, once the first line has told it. */
  format?(format: InputFormat): void;
}

export interface EntryValue {
  value: string;
  /** 1-based line where its row starts. */
  line: number;
  /** The whole row, with `keepRecords`. */
  record?: Record<string, string>;
}

/** The raw values of the entry column, as they arrive; rows with an empty cell are counted as blanks. */
export async function* streamEntryValues(
  chunks: AsyncIterable<string>,
  options: ParseOptions,
  sink: EntryStreamSink,
): AsyncGenerator<EntryValue> {
  const keep = options.keepRecords === true;
  const reader = await streamRows(chunks, options, sink, { entryOnly: !keep });
  for await (const row of reader.rows) {
    const column = reader.column();
    if (column === null) continue;
    const value = row.record[column] ?? '';
    if (value.trim() === '') sink.blank();
    else yield keep ? { value, line: row.line, record: row.record } : { value, line: row.line };
  }
}

/** An input's rows as they arrive. */
export interface RowStream {
  format: InputFormat;
  rows: AsyncIterable<InputRow>;
  /** The entry column: null once it is known not to be there (a problem says so). */
  column(): string | null;
  /** The columns seen so far: all of them once `rows` has ended (NDJSON: every field of every object). */
  header(): string[];
}

/**
 * Reads until the first non-blank line to tell the format, then hands out the rows one by one.
 * `entryOnly`: the rows may hold the entry column alone (the header is then not kept either).
 */
export async function streamRows(
  chunks: AsyncIterable<string>,
  options: ParseOptions,
  sink: EntryStreamSink,
  { entryOnly = false } = {},
): Promise<RowStream> {
  const { lineChars } = limitsOf(options.limits);
  const peeked = await peekFirstContentLine(normalizedChunks(chunks), lineChars);
  const format = options.format ?? formatOf(peeked, options, lineChars);
  sink.format?.(format);
  return { format, ...rowsOf(format, peeked, options, sink, entryOnly) };
}

/**
 * The format the first line tells. A first line past the line limit can only be a JSON document
 * written on one line (which has a limit of its own); anything else is refused there.
 */
function formatOf(peeked: Peeked, options: ParseOptions, lineChars: number): InputFormat {
  const long = peeked.longFirstLine;
  if (long === undefined) return detectFromFirstLine(peeked.firstLine, options);
  if (long.first === '[' || long.first === '{') return 'json';
  throw lineTooLong(options, long.line, lineChars);
}

type RowReader = Omit<RowStream, 'format'>;

function rowsOf(
  format: InputFormat,
  peeked: Peeked,
  options: ParseOptions,
  sink: EntryStreamSink,
  entryOnly: boolean,
): RowReader {
  switch (format) {
    case 'lines': {
      const column = listColumnName(options);
      return {
        rows: mapLines(peeked.text, options, (raw, line) => listRow(raw, line, column)),
        column: () => column,
        header: () => [column],
      };
    }
    case 'ndjson': {
      const reader = new NdjsonLineReader(options, (problem) => sink.problem(problem), entryOnly);
      return {
        rows: mapLines(peeked.text, options, (raw, line) => reader.row(raw, line)),
        column: () => reader.entryColumn ?? null,
        header: () => reader.header,
      };
    }
    case 'csv':
      return csvRows(peeked, options, sink);
    case 'json':
      return jsonRows(peeked.text, options, sink);
  }
}

/**
 * A JSON document is read whole: unlike NDJSON, nothing in it is complete before its last `]`,
 * and its problems (a broken document) must be found before any call. What prospect writes as
 * `--format json` is this shape; `--format ndjson` is the one to pipe at scale. A streaming JSON
 * parser would bring a dependency and a second reading of JSON whose line numbers and messages
 * must match this one's, for a shape no pipeline needs to stream.
 */
function jsonRows(text: AsyncIterable<string>, options: ParseOptions, sink: EntryStreamSink): RowReader {
  let column: string | null = null;
  let header: string[] = [];
  async function* rows(): AsyncGenerator<InputRow> {
    const table = jsonTable(await wholeJson(text, options), options);
    [column, header] = [table.column, table.header];
    for (const problem of table.problems) sink.problem(problem);
    yield* table.rows;
  }
  return { rows: rows(), column: () => column, header: () => header };
}

/** The whole JSON document, refused as soon as it passes the length or the nesting limit. */
async function wholeJson(text: AsyncIterable<string>, options: ParseOptions): Promise<string> {
  const { jsonChars, jsonDepth } = limitsOf(options.limits);
  const depth = new JsonDepth(jsonDepth);
  const pieces: string[] = [];
  let chars = 0;
  for await (const chunk of text) {
    chars += chunk.length;
    if (chars > jsonChars) throw jsonTooLong(options.origin, depth.line, jsonChars);
    const deep = depth.feed(chunk);
    if (deep !== null) throw jsonTooDeep(options.origin, deep, jsonDepth);
    pieces.push(chunk);
  }
  return pieces.join('');
}

/** CSV through csv-parse's stream parser (csvRecordReader's options), rows with the lines they start on. */
function csvRows(peeked: Peeked, options: ParseOptions, sink: EntryStreamSink): RowReader {
  const delimiter = guessDelimiter(peeked.firstLine ?? '') ?? ',';
  const headerLine = firstCsvRecord(peeked.head, delimiter)?.line;
  let column: string | null | undefined;
  const ready: InputRow[] = [];
  const reader = csvRecordReader(
    delimiter,
    headerLine,
    (row) => ready.push(row),
    (problem) => sink.problem(problem),
    { maxRecordBytes: limitsOf(options.limits).csvRecordBytes, origin: options.origin },
  );
  /** Once the header is read (or the input ended without one), whether it names the entry column. */
  const resolveColumn = () => {
    if (column !== undefined) return;
    column = findColumn(reader.header, options);
    if (column === null) sink.problem(columnNotFound(reader.header, options, headerLine ?? 1));
  };
  async function* rows(): AsyncGenerator<InputRow> {
    const parser = csvParser(reader.options);
    let failure: unknown;
    parser.on('error', (error) => (failure = error));
    const ended = new Promise<void>((resolve) => parser.once('close', resolve).once('end', resolve).resume());
    // csv-parse handles each write synchronously, calling on_record (which keeps nothing in the
    // stream: it returns null), so the rows of a chunk are ready as soon as write() returns.
    for await (const chunk of peeked.text) {
      parser.write(chunk);
      if (reader.fatal !== undefined) throw reader.fatal;
      if (failure !== undefined) throw failure;
      if (reader.header.length > 0) resolveColumn();
      yield* ready.splice(0);
    }
    parser.end();
    await ended;
    if (failure !== undefined) throw failure;
    resolveColumn();
    yield* ready.splice(0);
  }
  return { rows: rows(), column: () => column ?? null, header: () => reader.header };
}

async function* mapLines(
  text: AsyncIterable<string>,
  options: ParseOptions,
  toRow: (raw: string, line: number) => InputRow | null,
): AsyncGenerator<InputRow> {
  let line = 0;
  const { lineChars } = limitsOf(options.limits);
  for await (const raw of linesOf(text, lineChars, (at) => lineTooLong(options, at, lineChars))) {
    line += 1;
    const row = toRow(raw, line);
    if (row !== null) yield row;
  }
}

function lineTooLong(options: ParseOptions, line: number, limit: number): Error {
  return inputTooLarge(options.origin, `line ${line}`, `a line longer than ${characters(limit)}`, IS_IT_THE_RIGHT_FILE);
}

/**
 * The lines of a normalised text (split on `\n`), the last one even when it has no line break. Each
 * chunk is scanned once, and a line longer than `maxChars` is refused (`tooLong(line)`) as soon as it
 * passes the limit, before it is joined.
 */
export async function* linesOf(
  text: AsyncIterable<string>,
  maxChars = Infinity,
  tooLong: (line: number) => Error = (line) => new Error(`line ${line} is too long`),
): AsyncGenerator<string> {
  let pending: string[] = [];
  let pendingChars = 0;
  let line = 1;
  for await (const chunk of text) {
    let start = 0;
    for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', start)) {
      if (pendingChars + end - start > maxChars) throw tooLong(line);
      const piece = chunk.slice(start, end);
      yield pending.length === 0 ? piece : pending.join('') + piece;
      [pending, pendingChars, line, start] = [[], 0, line + 1, end + 1];
    }
    if (start === chunk.length) continue;
    pendingChars += chunk.length - start;
    if (pendingChars > maxChars) throw tooLong(line);
    pending.push(chunk.slice(start));
  }
  if (pending.length > 0) yield pending.join('');
}

const BOM = '\uFEFF';

/**
 * No BOM, and `\n` for CRLF and lone CR alike, so line numbers match what an editor shows (done once
 * for every format: detection and JSON.parse need it as much as the CSV reader). A chunk ending in
 * `\r` keeps it back until the next chunk says whether a `\n` follows.
 */
async function* normalizedChunks(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let started = false;
  let carriageReturn = false;
  for await (const raw of chunks) {
    let chunk = raw;
    if (!started && chunk !== '') {
      started = true;
      if (chunk.startsWith(BOM)) chunk = chunk.slice(1);
    }
    if (carriageReturn) chunk = `\r${chunk}`;
    carriageReturn = chunk.endsWith('\r');
    if (carriageReturn) chunk = chunk.slice(0, -1);
    if (chunk !== '') yield chunk.replace(/\r\n?/g, '\n');
  }
  if (carriageReturn) yield '\n';
}

interface Peeked {
  /** The first non-blank line, trimmed, once its line break (or the end) has arrived; null for none. */
  firstLine: string | null;
  /** The first non-blank line passed the line limit before its end: where it starts, and its first character. */
  longFirstLine?: { line: number; first: string };
  /** The text read to find it. */
  head: string;
  /** The whole text again, from its start: the head, then the rest as it arrives. */
  text: AsyncIterable<string>;
}

/** Reads up to the end of the first non-blank line (or `maxChars` of it), each chunk scanned once. */
async function peekFirstContentLine(text: AsyncIterable<string>, maxChars: number): Promise<Peeked> {
  const iterator = text[Symbol.asyncIterator]();
  const pieces: string[] = [];
  let current: string[] = [];
  let currentChars = 0;
  let line = 1;
  let found: Pick<Peeked, 'firstLine' | 'longFirstLine'> | undefined;
  while (found === undefined) {
    const next = await iterator.next();
    if (next.done) {
      const last = current.join('').trim();
      found = { firstLine: last === '' ? null : last };
      break;
    }
    const chunk = next.value;
    pieces.push(chunk);
    for (let start = 0; found === undefined;) {
      const end = chunk.indexOf('\n', start);
      const stop = end === -1 ? chunk.length : end;
      currentChars += stop - start;
      const part = chunk.slice(start, stop);
      if (currentChars > maxChars) {
        found = { firstLine: null, longFirstLine: { line, first: [...current, part].join('').trimStart().charAt(0) } };
      } else if (end === -1) {
        current.push(part);
        break;
      } else {
        const content = [...current, part].join('').trim();
        if (content !== '') found = { firstLine: content };
        [current, currentChars, line, start] = [[], 0, line + 1, end + 1];
      }
    }
  }
  const head = pieces.join('');
  async function* replay(): AsyncGenerator<string> {
    if (head !== '') yield head;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  return { ...found, head, text: replay() };
}
