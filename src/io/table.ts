import Table from 'cli-table3';
import type { RowWriter, WriterOptions } from './writers.js';
import type { TextSink } from './sink.js';
import { shorten } from '../util/text.js';

const MAX_CELL = 48;

/**
 * A table for people at a terminal. A table needs its column widths before its first line, so rows
 * are rendered one batch (one page) at a time rather than held until the end.
 */
export function tableWriter<Row>(sink: TextSink, options: WriterOptions<Row>): RowWriter<Row> {
  const { columns } = options;
  let rendered = 0;
  return {
    async writeRows(rows) {
      if (rows.length === 0) return;
      const table = new Table({
        head: rendered === 0 ? columns.map((column) => column.name) : [],
        style: { head: [], border: [] },
        // No rule between rows: a list of companies reads better dense, and fits twice as many lines.
        chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
        wordWrap: false,
      });
      for (const row of rows) table.push(columns.map((column) => cellText(column.get(row))));
      rendered += rows.length;
      await sink.write(`${table.toString()}\n`);
    },
    async finish() {
      if (rendered === 0) await sink.write('(no rows)\n');
    },
  };
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = String(value).replace(/[\r\n\t]+/g, ' ');
  return shorten(text, MAX_CELL);
}
