import { once } from 'node:events';
import { Writable } from 'node:stream';
import type ExcelJS from 'exceljs';
import WorkbookWriter from 'exceljs/lib/stream/xlsx/workbook-writer.js';
import { UsageError } from '../exit-codes.js';
import { formatCount } from '../ui/format-count.js';
import type { Cell } from './columns.js';
import type { TextSink } from './sink.js';
import type { RowWriter, WriterOptions } from './row-writer.js';

/** An Excel sheet holds 1,048,576 rows; the header takes one. */
const EXCEL_MAX_DATA_ROWS = 1_048_575;
/** Excel's most characters in one cell: a longer one is cut when the file is opened. */
const EXCEL_MAX_CELL_CHARS = 32_767;

export interface XlsxLimits {
  /** Rows below the header; more is refused before any of them is written. */
  maxDataRows: number;
  /**
   * The columns' widths are fixed before the first row is streamed, so they are measured on the
   * first rows only; a longer value further down is shown cut until the user widens its column.
   */
  widthSampleRows: number;
}

const DEFAULT_LIMITS: XlsxLimits = { maxDataRows: EXCEL_MAX_DATA_ROWS, widthSampleRows: 1_000 };
const MIN_WIDTH = 6;
const MAX_WIDTH = 60;
const LIST_SHEET = 'List';
const ABOUT_SHEET = 'About this list';

/**
 * A real workbook, streamed: exceljs' WorkbookWriter zips each row as it comes (inline strings, no
 * shared-string table), so memory stays flat whatever the row count. Every cell is a string or a
 * number, never a formula, so the CSV formula guard's `'` is not needed. Sheet "List" has a bold,
 * frozen header row with an autofilter; the provenance (`meta`) goes on sheet "About this list".
 */
export function xlsxWriter<Row>(
  sink: TextSink,
  options: WriterOptions<Row>,
  limits: XlsxLimits = DEFAULT_LIMITS,
): RowWriter<Row> {
  // pipeline refuses --state with xlsx up front (src/core/pipeline/plan.ts); this is the writer's own guard.
  if (options.resume)
    throw new UsageError('--state cannot resume an .xlsx file.', 'Write CSV with --state, or leave --state out.');
  const { columns } = options;
  const output = byteStream(sink);
  const workbook = new WorkbookWriter({ stream: output, useStyles: true, useSharedStrings: false });
  const sheet = workbook.addWorksheet(LIST_SHEET, { views: [{ state: 'frozen', ySplit: 1 }] });
  /** The first rows, held until their widths are known; undefined once the sheet has started. */
  let sample: Cell[][] | undefined = [];
  let rowsWritten = 0;

  const startSheet = (firstRows: Cell[][]) => {
    const headers = columns.map((column) => column.name);
    sheet.columns = headers.map((header, index) => ({
      width: columnWidth([header, ...firstRows.map((cells) => cells[index])]),
    }));
    const headerRow = sheet.addRow(headers);
    headerRow.font = { bold: true };
    headerRow.commit();
    for (const cells of firstRows) sheet.addRow(cells).commit();
  };

  return {
    async writeRows(rows) {
      if (rows.length === 0) return;
      if (rowsWritten + rows.length > limits.maxDataRows) {
        throw new UsageError(
          `the list has more than ${formatCount(limits.maxDataRows)} rows, more than an Excel sheet holds; no ` +
            `.xlsx was written.`,
          'Write CSV instead (-o FILE.csv or --format csv): it has no row limit.',
        );
      }
      const cellRows = rows.map((row) => columns.map((column) => xlsxCell(column.get(row))));
      rowsWritten += rows.length;
      if (sample) {
        sample.push(...cellRows);
        if (sample.length < limits.widthSampleRows) return;
        startSheet(sample);
        sample = undefined;
      } else {
        for (const cells of cellRows) sheet.addRow(cells).commit();
      }
      // Let the zip catch up with the rows before taking more: this is what keeps memory flat.
      await zipCaughtUp(sheet);
      if (output.writableNeedDrain) await once(output, 'drain');
    },
    async finish(meta) {
      if (sample) startSheet(sample);
      sample = undefined;
      sheet.autoFilter = {
        from: { row: 1, column: 1 },
        to: { row: rowsWritten + 1, column: Math.max(columns.length, 1) },
      };
      sheet.commit();
      writeAboutSheet(workbook, rowsWritten, meta);
      const closed = once(output, 'finish');
      await workbook.commit();
      await closed;
    },
  };
}

/**
 * exceljs hands the sheet's XML to the zip without waiting (its buffer ignores what write() answers),
 * so a fast producer would pile rows up in memory while the zip compresses. The zip's input stream
 * still keeps the standard account of it: wait until it has drained.
 */
async function zipCaughtUp(sheet: ExcelJS.Worksheet): Promise<void> {
  const pipes = (sheet as unknown as { stream: { pipes?: Writable[] } }).stream.pipes ?? [];
  for (const pipe of pipes) {
    if ((pipe as unknown as { _writableState?: { needDrain?: boolean } })._writableState?.needDrain)
      await once(pipe, 'drain');
  }
}

/**
 * The provenance, one field a row: `source.dataset | Licensed contacts`. The jobs hand over their run
 * record (the fields of --summary and FILE.meta.json, src/core/shared/provenance.ts); `rows` is the sheet's own count.
 */
function writeAboutSheet(workbook: ExcelJS.stream.xlsx.WorkbookWriter, rows: number, meta: unknown): void {
  const fields: Array<[string, Cell]> = [['rows', rows], ...flatten(meta, '').filter(([name]) => name !== 'rows')];
  const about = workbook.addWorksheet(ABOUT_SHEET);
  about.columns = [{ width: columnWidth(fields.map(([name]) => name)) }, { width: MAX_WIDTH }];
  const header = about.addRow(['field', 'value']);
  header.font = { bold: true };
  header.commit();
  for (const [name, value] of fields) about.addRow([name, xlsxCell(value)]).commit();
  about.commit();
}

function flatten(value: unknown, prefix: string): Array<[string, Cell]> {
  if (value === undefined) return [];
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return Object.entries(value).flatMap(([key, inner]) => flatten(inner, prefix ? `${prefix}.${key}` : key));
  }
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return [[prefix, value]];
  return [[prefix, JSON.stringify(value)]];
}

/** Text or a number, nothing else: a string is never read as a formula, a boolean reads as in CSV. */
function xlsxCell(value: Cell): string | number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  const text = String(value);
  if (text.length > EXCEL_MAX_CELL_CHARS) {
    throw new UsageError(
      `a cell holds ${formatCount(text.length)} characters, more than Excel keeps in one cell ` +
        `(${formatCount(EXCEL_MAX_CELL_CHARS)}); no .xlsx was written.`,
      'Write CSV instead (-o FILE.csv or --format csv).',
    );
  }
  return text;
}

/** Characters of the longest value (its longest line), plus a margin, within bounds. */
function columnWidth(values: ReadonlyArray<Cell>): number {
  let longest = 0;
  for (const value of values) {
    if (value === null || value === undefined) continue;
    for (const line of String(value).split('\n')) longest = Math.max(longest, line.length);
  }
  return Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, longest + 2));
}

/** The bytes exceljs produces, into prospect's sink (stdout or the atomic file), waiting on its backpressure. */
function byteStream(sink: TextSink): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      sink.write(chunk).then(() => done(), done);
    },
  });
}
