import stringWidth from 'string-width';

/**
 * How a table fits a width, decided once from a sample of its rows (the first screenful) so that
 * every later row lines up under the same header.
 *
 * Each column starts at its natural width: its widest cell or its header, at most MAX_CELL. When
 * the table is wider than the space, columns are cut (their cells end in "…") in this order:
 *   1. the columns of CUT_FIRST, in that order (technologies first, then titles, then names),
 *      each down to FIRST_FLOOR;
 *   2. headers wider than every cell under them, down to their cells (at least HEADER_FLOOR);
 *   3. then the widest column, one character at a time, none below CUT_FLOOR, the columns of
 *      CUT_LAST (what identifies a row: domain, email) only once no other can give;
 *   4. then, if the columns still cannot fit, whole columns are left out, in the same order
 *      (CUT_FIRST, then from the right), and the table says so under its last line.
 * `prospect help formats` (src/commands/help.ts) says the same to users.
 */
const MAX_CELL = 48;
export const FIRST_FLOOR = 14;
const HEADER_FLOOR = 5;
const CUT_FLOOR = 8;
const CUT_FIRST: readonly string[] = [
  'technologies',
  'title',
  'company_name',
  'full_name',
  'first_name',
  'last_name',
  'industry',
  'department',
  'source',
  'linkedin_url',
];
const CUT_LAST: readonly string[] = ['domain', 'business_email', 'email'];

/** cli-table3's frame: "│ " before each cell, " " after it, and the closing "│". */
export function frameWidth(columnCount: number): number {
  return columnCount * 3 + 1;
}

export interface TableLayout {
  /** Indexes of the columns shown, in their order. */
  shown: number[];
  /** The content width of each shown column (cli-table3's colWidths add the two spaces of padding). */
  widths: number[];
  /** Names of the columns left out to fit. */
  omitted: string[];
}

interface ColumnFit {
  name: string;
  /** The widest cell of the sample, at most MAX_CELL. */
  cells: number;
  /** Its natural width: the widest cell or the header. */
  natural: number;
  /** Its place in the cut order: CUT_FIRST's columns first, then the others from the right. */
  rank: number;
}

export function planLayout(
  names: readonly string[],
  sample: ReadonlyArray<readonly string[]>,
  width: number,
): TableLayout {
  const columns: ColumnFit[] = names.map((name, index) => {
    const cells = Math.min(MAX_CELL, Math.max(0, ...sample.map((row) => stringWidth(row[index] ?? ''))));
    const rank = CUT_FIRST.indexOf(name);
    return {
      name,
      cells,
      natural: Math.min(MAX_CELL, Math.max(cells, stringWidth(name))),
      rank: rank === -1 ? CUT_FIRST.length + (names.length - index) : rank,
    };
  });
  const byCutOrder = columns.map((_, index) => index).sort((a, b) => columns[a]!.rank - columns[b]!.rank);
  const omitted: number[] = [];
  for (;;) {
    const shown = columns.map((_, index) => index).filter((index) => !omitted.includes(index));
    const widths = cutToFit(
      shown.map((index) => columns[index]!),
      width,
    );
    const next = byCutOrder.find((index) => !omitted.includes(index));
    if (widths !== undefined || shown.length === 1 || next === undefined) {
      // One column alone wider than the space is cut to the space.
      return {
        shown,
        widths: widths ?? [Math.max(1, width - frameWidth(1))],
        omitted: omitted.map((index) => names[index] ?? ''),
      };
    }
    omitted.push(next);
  }
}

/** Steps 1 to 3 of the cut order; undefined when the columns cannot fit even at CUT_FLOOR. */
function cutToFit(columns: readonly ColumnFit[], width: number): number[] | undefined {
  const widths = columns.map((column) => column.natural);
  const excess = () => widths.reduce((sum, columnWidth) => sum + columnWidth, 0) + frameWidth(widths.length) - width;
  /** Takes up to what is in excess from column `index`, not below `floor`. */
  const cut = (index: number, floor: number) => {
    widths[index] = Math.max(Math.min(floor, widths[index]!), widths[index]! - Math.max(0, excess()));
  };
  const order = columns.map((_, index) => index).sort((a, b) => columns[a]!.rank - columns[b]!.rank);
  for (const index of order) if (CUT_FIRST.includes(columns[index]!.name)) cut(index, FIRST_FLOOR);
  for (const index of order)
    if (columns[index]!.cells < widths[index]!) cut(index, Math.max(columns[index]!.cells, HEADER_FLOOR));
  for (const lastResort of [false, true]) {
    while (excess() > 0) {
      let widest: number | undefined;
      for (const [index, columnWidth] of widths.entries()) {
        if (!lastResort && CUT_LAST.includes(columns[index]!.name)) continue;
        if (columnWidth > CUT_FLOOR && (widest === undefined || columnWidth > widths[widest]!)) widest = index;
      }
      if (widest === undefined) break;
      widths[widest] = widths[widest]! - 1;
    }
  }
  return excess() > 0 ? undefined : widths;
}
