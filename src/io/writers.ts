import type { Column, Cell } from './columns.js';
import { neutralizeFormula } from './formula.js';
import type { TextSink } from './sink.js';

export const OUTPUT_FORMATS = ['csv', 'json', 'ndjson', 'table'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Writes rows as they arrive; `finish` closes the document (JSON needs its closing bracket). */
export interface RowWriter<Row> {
  writeRows(rows: readonly Row[]): Promise<void>;
  finish(meta?: unknown): Promise<void>;
}

export interface WriterOptions<Row> {
  columns: ReadonlyArray<Column<Row>>;
  /** The full JSON form of a row (JSON and NDJSON keep nested data such as technology entries). */
  toJson: (row: Row) => unknown;
  escapeFormulas: boolean;
  /** Continue a document a resumed run already started (pipeline --state): no second header or opening. */
  resume?: { rowsWritten: number; started: boolean };
}

export async function createRowWriter<Row>(
  format: OutputFormat,
  sink: TextSink,
  options: WriterOptions<Row>,
): Promise<RowWriter<Row>> {
  switch (format) {
    case 'csv':
      return csvWriter(sink, options);
    case 'json':
      return jsonWriter(sink, options);
    case 'ndjson':
      return ndjsonWriter(sink, options);
    case 'table': {
      const { tableWriter } = await import('./table.js');
      return tableWriter(sink, options);
    }
  }
}

export function csvCell(value: Cell, escapeFormulas: boolean): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  return escapeFormulas ? neutralizeFormula(value) : value;
}

/**
 * One CSV field, byte for byte what csv-stringify writes with `record_delimiter: 'unix'` and
 * `quoted_match: /^\s|\s$|\r/` (test/unit/csv-encoding.test.ts checks the two against each other):
 * quoted when it holds a quote, a comma, a line feed or a carriage return (which spreadsheets read as
 * a line break, and csv-stringify would leave bare), or starts or ends with white space; quotes
 * inside are doubled. Written by hand because csv-stringify's generic path (option objects,
 * casting, arrays of arrays) was a third of the CPU of a large export.
 */
const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

export function csvField(value: string): string {
  if (value === '' || !NEEDS_QUOTES.test(value)) return value;
  return `"${value.includes('"') ? value.replaceAll('"', '""') : value}"`;
}

function csvWriter<Row>(sink: TextSink, options: WriterOptions<Row>): RowWriter<Row> {
  const { columns, escapeFormulas } = options;
  const encodeRow = (row: Row): string => {
    let line = '';
    for (let index = 0; index < columns.length; index++) {
      const field = csvField(csvCell(columns[index]!.get(row), escapeFormulas));
      line = index === 0 ? field : `${line},${field}`;
    }
    return `${line}\n`;
  };
  let headerWritten = options.resume?.started ?? false;
  const writeHeader = async () => {
    if (headerWritten) return;
    headerWritten = true;
    await sink.write(`${columns.map((column) => csvField(column.name)).join(',')}\n`);
  };
  return {
    async writeRows(rows) {
      await writeHeader();
      if (rows.length === 0) return;
      let text = '';
      for (const row of rows) text += encodeRow(row);
      await sink.write(text);
    },
    // A header-only file is how an empty result is written, when the user asked for one.
    async finish() {
      await writeHeader();
    },
  };
}

/** `{"data":[...],"meta":{...}}`, streamed: rows as they come, the meta object last. */
function jsonWriter<Row>(sink: TextSink, options: WriterOptions<Row>): RowWriter<Row> {
  let count = options.resume?.rowsWritten ?? 0;
  return {
    async writeRows(rows) {
      if (rows.length === 0) return;
      const parts = rows.map((row) => JSON.stringify(options.toJson(row)));
      const opening = count === 0 ? '{"data":[\n' : ',\n';
      count += rows.length;
      await sink.write(opening + parts.join(',\n'));
    },
    async finish(meta) {
      const opening = count === 0 ? '{"data":[' : '\n';
      const metaPart = meta === undefined ? '' : `,"meta":${JSON.stringify(meta)}`;
      await sink.write(`${opening}]${metaPart}}\n`);
    },
  };
}

function ndjsonWriter<Row>(sink: TextSink, options: WriterOptions<Row>): RowWriter<Row> {
  return {
    async writeRows(rows) {
      if (rows.length === 0) return;
      await sink.write(rows.map((row) => `${JSON.stringify(options.toJson(row))}\n`).join(''));
    },
    async finish() {},
  };
}
