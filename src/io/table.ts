import Table from 'cli-table3';
import { Help } from 'commander';
import type { RowWriter, WriterOptions } from './row-writer.js';
import type { TextSink } from './sink.js';
import { planLayout, type TableLayout } from './table-layout.js';
import { displaySafeLine } from '../util/display-safe.js';

/**
 * `--format table` into a file or a pipe: this many columns wide, its widths set from its first
 * SAMPLE_ROWS rows (a terminal uses its own width and its first screenful). Documented in
 * `prospect help formats`.
 */
export const FILE_TABLE_WIDTH = 160;
const FILE_SAMPLE_ROWS = 100;

/** Lines of a screen the header and the borders take: the sample is the rows that fit below them. */
const FRAME_LINES = 4;

/**
 * One table for the whole result, for people. Its column widths are set once, from the first
 * screenful of rows (or every row, when the result is smaller); the header is drawn once and the
 * rows stream on under it, cut with "…" where they are wider than their column (cli-table3 measures
 * wide characters such as CJK and emoji as two columns, so the frame stays aligned).
 */
export function tableWriter<Row>(sink: TextSink, options: WriterOptions<Row>): RowWriter<Row> {
  const names = options.columns.map((column) => displaySafeLine(column.name));
  const optional = options.columns.map((column) => column.tableOptional === true);
  const screen = sink.terminalSize?.();
  const width = screen?.columns ?? FILE_TABLE_WIDTH;
  const sampleRows = screen ? Math.max(1, screen.rows - FRAME_LINES) : FILE_SAMPLE_ROWS;
  let pending: string[][] = [];
  let layout: TableLayout | undefined;
  let bottomBorder = '';
  let rendered = 0;

  const draw = async (rows: string[][]) => {
    if (rows.length === 0) return;
    layout ??= planLayout(names, rows, width, optional);
    const { shown, widths } = layout;
    const table = new Table({
      head: rendered === 0 ? shown.map((index) => names[index] ?? '') : [],
      colWidths: widths.map((columnWidth) => columnWidth + 2),
      style: { head: [], border: [] },
      // No rule between rows: a list of companies reads better dense, and fits twice as many lines.
      chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
      wordWrap: false,
    });
    for (const row of rows) table.push(shown.map((index) => row[index] ?? ''));
    const lines = table.toString().split('\n');
    // Each batch is drawn as a table of its own: the first keeps its top border and header, every
    // batch gives up its bottom border, which closes the whole table in finish().
    bottomBorder = lines.pop() ?? '';
    if (rendered > 0) lines.shift();
    rendered += rows.length;
    await sink.write(`${lines.join('\n')}\n`);
  };

  return {
    async writeRows(rows) {
      const cells = rows.map((row) => options.columns.map((column) => cellText(column.get(row))));
      if (layout !== undefined) return draw(cells);
      pending.push(...cells);
      if (pending.length < sampleRows) return;
      const sample = pending;
      pending = [];
      await draw(sample);
    },
    async finish() {
      await draw(pending);
      pending = [];
      if (rendered === 0) return sink.write('(no rows)\n');
      await sink.write(`${bottomBorder}\n${omittedNote(layout?.omitted ?? [], width)}`);
    },
  };
}

/** Under the table, when columns had to be left out: which, wrapped to the table's width (commander's wrapper). */
function omittedNote(omitted: readonly string[], width: number): string {
  if (omitted.length === 0) return '';
  const help = new Help();
  help.minWidthToWrap = 1;
  const note =
    `${omitted.length} column${omitted.length === 1 ? '' : 's'} left out to fit ${width} columns: ` +
    `${omitted.join(', ')}. Choose columns with --columns.`;
  return `${help.boxWrap(note, width)}\n`;
}

/** A cell on one line (line breaks and tabs would break the frame), with nothing a terminal would obey. */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return displaySafeLine(String(value));
}
