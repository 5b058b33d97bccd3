import type { Column } from './columns.js';

/** What every output format's writer does (writers.ts, table.ts, xlsx.ts). */
export interface RowWriter<Row> {
  writeRows(rows: readonly Row[]): Promise<void>;
  finish(meta?: unknown): Promise<void>;
}

export interface WriterOptions<Row> {
  columns: ReadonlyArray<Column<Row>>;
  /** The full JSON form of a row (JSON and NDJSON keep nested data such as technology entries). */
  toJson: (row: Row) => unknown;
  escapeFormulas: boolean;
  /** A UTF-8 byte-order mark before the CSV header (--bom): Excel on Windows otherwise reads its ANSI code page. */
  bom?: boolean;
  /** Continue a document a resumed run already started (pipeline --state): no second header or opening. */
  resume?: { rowsWritten: number; started: boolean };
}
