import { stringify, type Options as StringifyOptions } from 'csv-stringify/sync';
import type { Column } from './columns.js';
import { neutralizeFormula } from './formula.js';
import type { TextSink } from './sink.js';

export const OUTPUT_FORMATS = ['csv', 'json', 'ndjson', 'table', 'xlsx'] as const;
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
    case 'xlsx': {
      // exceljs is large: loaded only by a run that writes a workbook, so start-up does not pay for it.
      const { xlsxWriter } = await import('./xlsx.js');
      return xlsxWriter(sink, options);
    }
  }
}

/**
 * csv-stringify's options for every CSV prospect writes: LF between records, and quotes around a
 * field that starts or ends with white space or holds a carriage return (a spreadsheet reads a bare
 * CR as the end of the row), besides the quotes, commas and line feeds csv-stringify always quotes.
 */
const CSV_FORMAT: StringifyOptions = { record_delimiter: 'unix', quoted_match: /^\s|\s$|\r/ };

/**
 * The cell casts: a string passes through the formula guard (src/io/formula.ts, not csv-stringify's
 * `escape_formulas`, which misses a leading LF) and a boolean reads `true`/`false` (csv-stringify
 * would write `1` and an empty cell).
 */
function csvRowOptions(escapeFormulas: boolean): StringifyOptions {
  return {
    ...CSV_FORMAT,
    cast: {
      boolean: (value) => String(value),
      string: escapeFormulas ? (value) => neutralizeFormula(value) : (value) => value,
    },
  };
}

function csvWriter<Row>(sink: TextSink, options: WriterOptions<Row>): RowWriter<Row> {
  const { columns } = options;
  const rowOptions = csvRowOptions(options.escapeFormulas);
  let headerWritten = options.resume?.started ?? false;
  const writeHeader = async () => {
    if (headerWritten) return;
    headerWritten = true;
    await sink.write(stringify([columns.map((column) => column.name)], CSV_FORMAT));
  };
  return {
    async writeRows(rows) {
      await writeHeader();
      if (rows.length === 0) return;
      await sink.write(stringify(rows.map((row) => columns.map((column) => column.get(row))), rowOptions));
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
