/** The size prospect draws for: what the terminal reports, when that is believable. */
export interface TerminalSize {
  columns: number;
  rows: number;
}

/** What a terminal that reports nothing believable is taken to be. */
const FALLBACK_SIZE: Readonly<TerminalSize> = { columns: 80, rows: 24 };

/**
 * A size outside these bounds is a terminal that cannot say (0×0 under `script`, some CI runners, `docker exec -t`).
 */
const BELIEVABLE = { columns: { min: 20, max: 1000 }, rows: { min: 5, max: 1000 } } as const;

/**
 * The stream's size, each side replaced by 80×24's when it is missing, 0 or absurd: every width
 * prospect derives (table, progress line, help) divides or repeats by it, and a 0 there once
 * made a redraw loop that never ended.
 */
export function terminalSize(stream: { columns?: number; rows?: number }): TerminalSize {
  return {
    columns: believable(stream.columns, BELIEVABLE.columns) ?? FALLBACK_SIZE.columns,
    rows: believable(stream.rows, BELIEVABLE.rows) ?? FALLBACK_SIZE.rows,
  };
}

function believable(value: number | undefined, bounds: { min: number; max: number }): number | undefined {
  return value !== undefined && Number.isInteger(value) && value >= bounds.min && value <= bounds.max
    ? value
    : undefined;
}
