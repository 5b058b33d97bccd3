import stringWidth from 'string-width';

/**
 * How a table fits a width, decided once from a sample of its rows (the first screenful) so that
 * every later row lines up under the same header.
 *
 * Each column starts at its natural width: its widest cell or its header, at most MAX_CELL. When
 * the table is wider than the space, columns are cut (their cells end in "…") in this order:
 *   1. the columns of CUT_FIRST, in that order (technologies first, then titles, then names),
 *      each down to CUT_FLOOR;
 *   2. then the widest remaining column, one character at a time, none below CUT_FLOOR, the
 *      columns of CUT_LAST (what identifies a row: domain, email) only once no other can give;
 *   3. then, if the columns still cannot fit, whole columns are left out, in the same order
 *      (CUT_FIRST, then from the right), and the table says so under its last line.
 * `prospect help formats` (src/commands/help.ts) says the same to users.
 */
export const MAX_CELL = 48;
export const CUT_FLOOR = 8;
export const CUT_FIRST: readonly string[] = [
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

export const CUT_LAST: readonly string[] = ['domain', 'business_email', 'email'];

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

export function planLayout(names: readonly string[], sample: ReadonlyArray<readonly string[]>, width: number): TableLayout {
  const natural = names.map((name, index) => Math.min(MAX_CELL, Math.max(stringWidth(name), ...sample.map((row) => stringWidth(row[index] ?? '')))));
  const cutRank = (index: number) => {
    const rank = CUT_FIRST.indexOf(names[index] ?? '');
    // Named columns first, in CUT_FIRST's order; then the others from the right.
    return rank === -1 ? CUT_FIRST.length + (names.length - index) : rank;
  };
  const byCutOrder = names.map((_, index) => index).sort((a, b) => cutRank(a) - cutRank(b));
  const omitted: number[] = [];
  for (;;) {
    const shown = names.map((_, index) => index).filter((index) => !omitted.includes(index));
    const widths = cutToFit(
      shown.map((index) => natural[index] ?? 1),
      shown.map((index) => names[index] ?? ''),
      shown.map(cutRank),
      width,
    );
    const next = byCutOrder.find((index) => !omitted.includes(index));
    if (widths !== undefined || shown.length === 1 || next === undefined) {
      // One column alone wider than the space is cut to the space.
      return { shown, widths: widths ?? [Math.max(1, width - frameWidth(1))], omitted: omitted.map((index) => names[index] ?? '') };
    }
    omitted.push(next);
  }
}

/** Steps 1 and 2 of the cut order; undefined when the columns cannot fit even at CUT_FLOOR. */
function cutToFit(natural: readonly number[], names: readonly string[], rank: readonly number[], width: number): number[] | undefined {
  const widths = [...natural];
  const excess = () => widths.reduce((sum, columnWidth) => sum + columnWidth, 0) + frameWidth(widths.length) - width;
  const order = widths.map((_, index) => index).sort((a, b) => (rank[a] ?? 0) - (rank[b] ?? 0));
  for (const index of order) {
    if (excess() <= 0) return widths;
    if (CUT_FIRST.includes(names[index] ?? '')) widths[index] = Math.max(Math.min(CUT_FLOOR, natural[index] ?? 0), (widths[index] ?? 0) - excess());
  }
  for (const lastResort of [false, true]) {
    while (excess() > 0) {
      let widest: number | undefined;
      for (const [index, columnWidth] of widths.entries()) {
        if (!lastResort && CUT_LAST.includes(names[index] ?? '')) continue;
        if (columnWidth > CUT_FLOOR && (widest === undefined || columnWidth > (widths[widest] ?? 0))) widest = index;
      }
      if (widest === undefined) break;
      widths[widest] = (widths[widest] ?? 0) - 1;
    }
  }
  return excess() > 0 ? undefined : widths;
}
