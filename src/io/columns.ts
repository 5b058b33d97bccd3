import { UsageError } from '../exit-codes.js';
import { presetPairs } from './presets.js';

export type Cell = string | number | boolean | null | undefined;

/** One output column: its header and how to read it from a row. */
export interface Column<Row> {
  name: string;
  get(row: Row): Cell;
  /** A table draws it only where the terminal has room left for it (a wide terminal's extras). */
  tableOptional?: boolean;
}

/** One entry of `--columns`: a source column, and the header to write it under (`source:Header`). */
interface ColumnChoice {
  source: string;
  /** undefined: the source's own name; '' (`source:`): leave the column out of a preset. */
  header: string | undefined;
}

/**
 * The columns to write. Without a preset, `--columns a,b:Header` keeps those columns in that order,
 * each under its own name or the header given. With `--preset`, the preset's columns come first and
 * `--columns` changes them one by one: `source:Header` renames (or adds at the end), `source:` leaves
 * one out, a plain name adds one under its own name.
 */
export function selectColumns<Row>(
  all: ReadonlyArray<Column<Row>>,
  spec: string | undefined,
  preset?: string,
): Column<Row>[] {
  const byName = new Map(all.map((column) => [column.name, column]));
  const choices = spec === undefined ? undefined : parseColumnChoices(spec, byName);
  checkSources(
    all,
    (choices ?? []).map((choice) => choice.source),
  );
  let picked: ColumnChoice[];
  if (preset === undefined) {
    if (choices === undefined) return [...all];
    const dropped = choices.find((choice) => choice.header === '');
    if (dropped)
      throw new UsageError(
        `--columns "${dropped.source}:" leaves out a column, which only means something with --preset.`,
        'Name the columns to keep instead.',
      );
    picked = choices;
  } else {
    picked = presetPairs(preset)
      .filter(([source]) => byName.has(source))
      .map(([source, header]) => ({ source, header }));
    for (const choice of choices ?? []) {
      const index = picked.findIndex((entry) => entry.source === choice.source);
      if (choice.header === '') {
        if (index >= 0) picked.splice(index, 1);
      } else if (index < 0) picked.push(choice);
      else if (choice.header !== undefined) picked[index] = choice;
    }
  }
  const columns = picked.map((choice) => {
    const column = byName.get(choice.source)!;
    return choice.header === undefined ? column : { name: choice.header, get: column.get };
  });
  checkHeadersDistinct(columns);
  return columns;
}

/**
 * An entry that is a column's whole name is that column, even when the name holds a colon (verify keeps the input's
 * headers).
 */
function parseColumnChoices(spec: string, known: ReadonlyMap<string, unknown>): ColumnChoice[] {
  const choices = spec
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0)
    .map((entry) => {
      const colon = entry.indexOf(':');
      return colon < 0 || known.has(entry)
        ? { source: entry, header: undefined }
        : { source: entry.slice(0, colon).trim(), header: entry.slice(colon + 1).trim() };
    });
  if (choices.length === 0) throw new UsageError('--columns needs at least one column name.');
  return choices;
}

function checkSources<Row>(all: ReadonlyArray<Column<Row>>, sources: string[]): void {
  const known = new Set(all.map((column) => column.name));
  const unknown = sources.filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new UsageError(
      `unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((name) => `"${name}"`).join(', ')} in --columns.`,
      `Columns are: ${all.map((column) => column.name).join(', ')}.`,
    );
  }
}

/** A CRM importer maps columns by header: two columns under one header would be imported as one. */
function checkHeadersDistinct<Row>(columns: ReadonlyArray<Column<Row>>): void {
  const seen = new Set<string>();
  for (const { name } of columns) {
    if (seen.has(name))
      throw new UsageError(
        `two columns would both be headed "${name}".`,
        'Give each column its own header in --columns (source:Header).',
      );
    seen.add(name);
  }
}
