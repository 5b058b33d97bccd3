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
  return { format, columns };
}
