import { selectColumns, type Column } from '../../io/columns.js';
import { resolveFormat } from '../../io/output.js';
import type { OutputFormat } from '../../io/writers.js';
import type { RunContext } from '../../runtime/context.js';
import { UsageError } from '../../exit-codes.js';
import { presetRequirements } from '../../io/presets.js';
import { countOf } from '../../ui/format-count.js';

/**
 * What an export writes: the format (--format, else -o's extension, else a table for a terminal and
 * CSV for a pipe) and the columns (--preset changed by --columns; else --columns; else the narrow set
 * a table shows; else all).
 */
export function planOutput<Row>(
  ctx: RunContext,
  options: {
    format?: string | undefined;
    output?: string | undefined;
    columns?: string | undefined;
    preset?: string | undefined;
    bom?: boolean;
  },
  all: ReadonlyArray<Column<Row>>,
  tableColumns?: readonly string[],
): { format: OutputFormat; columns: Column<Row>[] } {
  const format = resolveFormat({
    format: options.format,
    outputPath: options.output,
    stdoutIsTTY: Boolean(ctx.stdout.isTTY),
    bom: options.bom,
  });
  const narrow = format === 'table' && options.preset === undefined ? tableColumns?.join(',') : undefined;
  const selected = selectColumns(all, options.columns ?? narrow, options.preset);
  const columns = options.preset === undefined ? selected : checkPreset(ctx, options.preset, selected);
  if (narrow === undefined || options.columns !== undefined) return { format, columns };
  // A wide terminal shows more of what a rep uses; the table draws these only where they fit.
  const extras = TABLE_EXTRAS.flatMap((name) => {
    const column = all.find((candidate) => candidate.name === name);
    return column && !tableColumns!.includes(name) ? [{ ...column, tableOptional: true }] : [];
  });
  return { format, columns: [...columns, ...extras] };
}

/** The columns a table adds, in this order, where the terminal has room (issue 36). */
const TABLE_EXTRAS = ['industry', 'phone', 'technologies', 'department', 'linkedin_url'];

/**
 * A preset's columns against what its CRM needs on every row: a needed column the run cannot write
 * (`contacts --preset salesforce` of a plain list of domains has no Company) is exit 2 before any
 * call; rows that leave one empty are counted, and said in one warning line a column at the end.
 */
function checkPreset<Row>(ctx: RunContext, preset: string, columns: Column<Row>[]): Column<Row>[] {
  const required = presetRequirements(preset);
  const missing = Object.keys(required).filter((header) => !columns.some((column) => column.name === header));
  if (missing.length > 0)
    throw new UsageError(
      `--preset ${preset} needs a ${missing.join(' and a ')} column, and this input gives none: ` +
        `${required[missing[0]!]}.`,
      'Read a companies export (`prospect companies … --format ndjson | prospect contacts …`), run `pipeline`, ' +
        `or name a column for it: --columns "domain:${missing[0]}".`,
    );
  return columns.map((column) => {
    const why = required[column.name];
    return why === undefined ? column : countingEmpty(ctx, column, `(--preset ${preset}): ${why}`);
  });
}

/** The column as it was, counting the rows it leaves empty (once a row: a table may read a cell twice). */
function countingEmpty<Row>(ctx: RunContext, column: Column<Row>, why: string): Column<Row> {
  const seen = new WeakSet<object>();
  let empty = 0;
  ctx.onCleanup(() => {
    if (empty > 0) ctx.reporter.caveat(`${countOf(empty, 'row')} with no ${column.name} ${why}.`);
  });
  return {
    ...column,
    get(row: Row) {
      const value = column.get(row);
      const key = row as object;
      if ((value === null || value === undefined || value === '') && !seen.has(key)) {
        seen.add(key);
        empty += 1;
      }
      return value;
    },
  };
}
