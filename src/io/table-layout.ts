import stringWidth from 'string-width';

/**
 * How a table fits a width, decided once from a sample of its rows (the first screenful) so that
 * every later row lines up under the same header.
 *
 * A column empty in every row of the sample is not drawn. The email and the person's name come
 * first, whatever the order asked for: they are what a rep reads a row for. Each column starts at
 * its natural width: its widest cell or its header, at most MAX_CELL. When the table is wider than
 * the space, columns are cut (their cells end in "…") in this order:
 *   1. the columns of CUT_FIRST, in that order (technologies first, then titles, then names),
 *      each down to FIRST_FLOOR;
 *   2. headers wider than every cell under them, down to their cells (at least HEADER_FLOOR);
 *   3. then the widest column, one character at a time, none below CUT_FLOOR, the columns of
 *      CUT_LAST (domain) only once no other can give; an email column is never cut below
 *      EMAIL_FLOOR, so an address of up to 40 characters is read whole at any width from 60;
 *   4. then, if the columns still cannot fit, whole columns are left out, the least needed first
 *      (columns KEEP does not name from the right, then KEEP's from its end), and the table says so under it.
 * Optional columns (a wide terminal's extras: industry, phone, technologies) are added after,
 * each only where the room left holds it.
 * `prospect help formats` (src/commands/help.ts) says the same to users.
 */
const MAX_CELL = 48;
export const FIRST_FLOOR = 14;
const HEADER_FLOOR = 5;
const CUT_FLOOR = 8;
const EMAIL_FLOOR = 40;
/** A text column reads well at this width: a wide terminal's extras are added while every column keeps it. */
const COMFORT = 20;
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
const CUT_LAST: readonly string[] = ['domain'];
/** The columns kept longest when some must go, most needed first (after the email and the name). */
const KEEP: readonly string[] = [
  'domain',
  'verification',
  'company_name',
  'title',
  'email_freshness',
  'seniority',
  'country',
  'employee_range',
  'crux_rank',
  'tech_count',
  'industry',
  'phone',
  'technologies',
  'department',
  'verified_at',
  'linkedin_url',
  'source',
  'email_age_days',
  'business_email_last_seen',
  'first_name',
  'last_name',
];
/** Headers of a person's name: drawn right after the email. */
const NAME_HEADERS = new Set(['full_name', 'name', 'full name', 'contact_name', 'contact']);
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** cli-table3's frame: "│ " before each cell, " " after it, and the closing "│". */
export function frameWidth(columnCount: number): number {
  return columnCount * 3 + 1;
}

export interface TableLayout {
  /** Indexes of the columns shown, in their order. */
  shown: number[];
  /** The content width of each shown column (cli-table3's colWidths add the two spaces of padding). */
  widths: number[];
  /** Names of the columns left out to fit (not the empty ones, nor optional ones without room). */
  omitted: string[];
}

interface ColumnFit {
  name: string;
  /** The widest cell of the sample, at most MAX_CELL. */
  cells: number;
  /** Its natural width: the widest cell or the header. */
  natural: number;
  /** Its place in the leave-out order: the highest goes first. */
  rank: number;
  /** Never cut below this (an email column's address). */
  floor: number;
  /** Its place in the table: email, then name, then the order asked for. */
  place: number;
  /** Every cell of the sample is an email address. */
  email: boolean;
}

export function planLayout(
  names: readonly string[],
  sample: ReadonlyArray<readonly string[]>,
  width: number,
  optional: readonly boolean[] = [],
): TableLayout {
  const columns = names.map((name, index) => columnFit(name, index, sample));
  const drawn = columns.map((_, index) => index).filter((index) => columns[index]!.cells > 0);
  const candidates = (drawn.length > 0 ? drawn : columns.map((_, index) => index)).sort(
    (a, b) => columns[a]!.place - columns[b]!.place,
  );
  const required = candidates.filter((index) => !optional[index]);
  const shown = required.length > 0 ? required : candidates.slice(0, 1);
  const omitted: number[] = [];
  for (;;) {
    const widths = cutToFit(
      shown.map((index) => columns[index]!),
      width,
    );
    if (widths !== undefined) return withOptional(columns, shown, widths, candidates, optional, width, omitted);
    if (shown.length === 1)
      return { shown, widths: [Math.max(1, width - frameWidth(1))], omitted: omitted.map(nameOf) };
    const least = shown.reduce((worst, index) => (columns[index]!.rank > columns[worst]!.rank ? index : worst));
    shown.splice(shown.indexOf(least), 1);
    omitted.push(least);
  }

  function nameOf(index: number): string {
    return names[index] ?? '';
  }
}

function columnFit(name: string, index: number, sample: ReadonlyArray<readonly string[]>): ColumnFit {
  const values = sample.map((row) => row[index] ?? '').filter((value) => value !== '');
  const cells = Math.min(MAX_CELL, Math.max(0, ...values.map((value) => stringWidth(value))));
  const natural = Math.min(MAX_CELL, Math.max(cells, stringWidth(name)));
  const email = values.length > 0 && values.every((value) => EMAIL.test(value));
  const person = NAME_HEADERS.has(name.toLowerCase());
  const kept = KEEP.indexOf(name);
  return {
    name,
    cells,
    natural,
    rank: email ? -2 : person ? -1 : kept !== -1 ? kept : KEEP.length + index,
    floor: email ? Math.min(natural, EMAIL_FLOOR) : Math.min(natural, CUT_FLOOR),
    place: email ? -2 : person ? -1 : index,
    email,
  };
}

/**
 * The optional columns added, in their order, while every column still fits at a comfortable
 * width (text columns at COMFORT, the others whole); then the widths of them all.
 */
function withOptional(
  columns: readonly ColumnFit[],
  shown: number[],
  widths: number[],
  candidates: readonly number[],
  optional: readonly boolean[],
  width: number,
  omitted: number[],
): TableLayout {
  const comfortable = (indexes: readonly number[]) =>
    indexes.reduce((sum, index) => {
      const column = columns[index]!;
      return sum + (CUT_FIRST.includes(column.name) ? Math.min(column.natural, COMFORT) : column.natural);
    }, 0) + frameWidth(indexes.length);
  // What each text column needs to stay readable: COMFORT, or the width it has without the extras.
  const readable = new Map(shown.map((index, k) => [index, Math.min(columns[index]!.natural, COMFORT, widths[k]!)]));
  // cutToFit cuts titles and names before the extras (CUT_FIRST): an extra that would push them
  // below COMFORT is not added (at 200 columns a LinkedIn URL took the room of "Christopher Collins").
  const keepsReadable = (indexes: readonly number[]) => {
    const cut = cutToFit(
      indexes.map((index) => columns[index]!),
      width,
    );
    return (
      cut !== undefined &&
      indexes.every(
        (index, k) =>
          !CUT_FIRST.includes(columns[index]!.name) ||
          cut[k]! >= (readable.get(index) ?? Math.min(columns[index]!.natural, COMFORT)),
      )
    );
  };
  const extras = candidates.filter((index) => optional[index]);
  const added: number[] = [];
  for (const index of extras) {
    const next = [...shown, ...added, index];
    if (comfortable(next) <= width && keepsReadable(next)) added.push(index);
  }
  const all = [...shown, ...added];
  const allWidths =
    added.length === 0
      ? undefined
      : cutToFit(
          all.map((index) => columns[index]!),
          width,
        );
  return allWidths === undefined
    ? { shown, widths, omitted: omitted.map((index) => columns[index]!.name) }
    : { shown: all, widths: allWidths, omitted: omitted.map((index) => columns[index]!.name) };
}

/** Steps 1 to 3 of the cut order; undefined when the columns cannot fit even at their floors. */
function cutToFit(columns: readonly ColumnFit[], width: number): number[] | undefined {
  const widths = columns.map((column) => column.natural);
  const excess = () => widths.reduce((sum, columnWidth) => sum + columnWidth, 0) + frameWidth(widths.length) - width;
  /** Takes up to what is in excess from column `index`, not below `floor`. */
  const cut = (index: number, floor: number) => {
    const least = Math.max(floor, columns[index]!.floor);
    widths[index] = Math.max(Math.min(least, widths[index]!), widths[index]! - Math.max(0, excess()));
  };
  const order = columns.map((_, index) => index).sort((a, b) => cutRank(columns[a]!) - cutRank(columns[b]!));
  for (const index of order) if (CUT_FIRST.includes(columns[index]!.name)) cut(index, FIRST_FLOOR);
  for (const index of order)
    if (columns[index]!.cells < widths[index]!) cut(index, Math.max(columns[index]!.cells, HEADER_FLOOR));
  // Where an email identifies the row, the domain is cut like any other column.
  const hasEmail = columns.some((column) => column.email);
  for (const lastResort of [false, true]) {
    while (excess() > 0) {
      let widest: number | undefined;
      for (const [index, columnWidth] of widths.entries()) {
        if (!lastResort && !hasEmail && CUT_LAST.includes(columns[index]!.name)) continue;
        const floor = Math.max(CUT_FLOOR, columns[index]!.floor);
        if (columnWidth > floor && (widest === undefined || columnWidth > widths[widest]!)) widest = index;
      }
      if (widest === undefined) break;
      widths[widest] = widths[widest]! - 1;
    }
  }
  return excess() > 0 ? undefined : widths;
}

/** CUT_FIRST's order, then the rest. */
function cutRank(column: ColumnFit): number {
  const rank = CUT_FIRST.indexOf(column.name);
  return rank === -1 ? CUT_FIRST.length : rank;
}
