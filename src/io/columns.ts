import { UsageError } from '../exit-codes.js';

export type Cell = string | number | boolean | null | undefined;

/** One output column: its header and how to read it from a row. */
export interface Column<Row> {
  name: string;
  get(row: Row): Cell;
}

/** Picks the columns named by `--columns a,b,c`, in that order, or explains which names exist. */
export function selectColumns<Row>(all: ReadonlyArray<Column<Row>>, names: string | undefined): Column<Row>[] {
  if (names === undefined) return [...all];
  const wanted = names.split(',').map((name) => name.trim()).filter((name) => name.length > 0);
  if (wanted.length === 0) throw new UsageError('--columns needs at least one column name.');
  const byName = new Map(all.map((column) => [column.name, column]));
  const unknown = wanted.filter((name) => !byName.has(name));
  if (unknown.length > 0) {
    throw new UsageError(
      `unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((name) => `"${name}"`).join(', ')} in --columns.`,
      `Columns are: ${all.map((column) => column.name).join(', ')}.`,
    );
  }
  return wanted.map((name) => byName.get(name)!);
}
