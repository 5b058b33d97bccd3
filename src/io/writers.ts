import { stringify, type Options as StringifyOptions } from 'csv-stringify/sync';
import { neutralizeFormula } from './formula.js';
import { jsonSafe } from '../util/display-safe.js';
import type { TextSink } from './sink.js';
import type { RowWriter, WriterOptions } from './row-writer.js';

export const OUTPUT_FORMATS = ['csv', 'json', 'ndjson', 'table', 'xlsx'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Writes rows as they arrive; `finish` closes the document (JSON needs its closing bracket). */
export type { RowWriter, WriterOptions };

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
      // exceljs only for a workbook (README "Start-up").
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
    await sink.write(stringify([columns.map((column) => column.name)], { ...CSV_FORMAT, bom: options.bom === true }));
  };
  return {
    async writeRows(rows) {
      // An empty page writes nothing: a run that ends with no row (exit 3) says "Nothing was written",
      // and a header on stdout would make that untrue.
      if (rows.length === 0) return;
      await writeHeader();
      await writeInPieces(sink, rows, (piece) =>
        stringify(
          piece.map((row) => columns.map((column) => column.get(row))),
          rowOptions,
        ),
      );
    },
    // A header-only file is how an empty result is written, when the user asked for one.
    async finish() {
      await writeHeader();
    },
  };
}

/**
 * Rows formatted and written a few dozen at a time: one string for a whole page would go to V8's large-object
 * space, freed only by a full collection, where pieces this size die young.
 */
const ROWS_PER_PIECE = 32;

async function writeInPieces<Row>(
  sink: TextSink,
  rows: readonly Row[],
  format: (piece: readonly Row[]) => string,
): Promise<void> {
  for (let start = 0; start < rows.length; start += ROWS_PER_PIECE) {
    await sink.write(format(rows.slice(start, start + ROWS_PER_PIECE)));
  }
}

/** `{"data":[...],"meta":{...}}`, streamed: rows as they come, the meta object last. */
function jsonWriter<Row>(sink: TextSink, options: WriterOptions<Row>): RowWriter<Row> {
  let count = options.resume?.rowsWritten ?? 0;
  return {
    async writeRows(rows) {
      await writeInPieces(sink, rows, (piece) => {
        const opening = count === 0 ? '{"data":[\n' : ',\n';
        count += piece.length;
        return opening + piece.map((row) => jsonSafe(JSON.stringify(options.toJson(row)))).join(',\n');
      });
    },
    async finish(meta) {
      const opening = count === 0 ? '{"data":[' : '\n';
      const metaPart = meta === undefined ? '' : `,"meta":${jsonSafe(JSON.stringify(meta))}`;
      await sink.write(`${opening}]${metaPart}}\n`);
    },
  };
}

function ndjsonWriter<Row>(sink: TextSink, options: WriterOptions<Row>): RowWriter<Row> {
  return {
    async writeRows(rows) {
      await writeInPieces(sink, rows, (piece) =>
        piece.map((row) => `${jsonSafe(JSON.stringify(options.toJson(row)))}\n`).join(''),
      );
    },
    async finish() {},
  };
}
