import { selectColumns, type Column } from '../../io/columns.js';
import { resolveFormat } from '../../io/output.js';
import type { OutputFormat } from '../../io/writers.js';
import type { RunContext } from '../../runtime/context.js';

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
  const columns = selectColumns(all, options.columns ?? narrow, options.preset);
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
