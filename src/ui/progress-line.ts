import stringWidth from 'string-width';
import { formatDuration } from './duration.js';
import { formatCount } from './format-count.js';

const BAR_CELLS = 20;

/** How far a job has got: a bar once the total is known, a spinner with the count until then. */
export interface ProgressState {
  /** Units of work done (companies listed, domains asked, rows verified). */
  done: number;
  /** The number of units in all, once known. */
  total?: number | undefined;
  /** What `done` counts, in the plural: "companies". */
  noun: string;
  /** Other counts for the same line: "1,020 contacts · 12 units spent". */
  detail?: string;
}

/**
 * "Fetching companies ██░░ 31% · 3,100/10,000 companies · 1,240/s · ETA 7s · detail",
 * made to fit `width` columns: the detail goes first, then the rate, then the bar; what is still
 * too long is cut with "…". Without a total: "Fetching companies · 3,100 companies · 1,240/s".
 */
export function progressLine(label: string, state: ProgressState, elapsedMs: number, width: number): string {
  const seconds = Math.max(elapsedMs / 1000, 0.001);
  const rate = state.done / seconds;
  const known = state.total !== undefined && state.total > 0;
  const ratio = known ? Math.min(state.done / state.total!, 1) : 0;
  const parts: Record<'bar' | 'percent' | 'count' | 'rate' | 'eta' | 'detail', string | undefined> = {
    bar: known ? bar(ratio) : undefined,
    percent: known ? `${Math.floor(ratio * 100)}%` : undefined,
    count: known
      ? `${formatCount(state.done)}/${formatCount(state.total!)} ${state.noun}`
      : `${formatCount(state.done)} ${state.noun}`,
    rate: `${formatCount(Math.round(rate))}/s`,
    eta: known
      ? `ETA ${rate > 0 ? formatDuration((state.total! - Math.min(state.done, state.total!)) / rate) : '…'}`
      : undefined,
    detail: state.detail,
  };
  const compose = (shown: typeof parts) => {
    const head = [label, shown.bar, shown.percent].filter(Boolean).join(' ');
    return [head, shown.count, shown.rate, shown.eta, shown.detail].filter(Boolean).join(' · ');
  };
  let line = compose(parts);
  for (const drop of ['detail', 'rate', 'bar'] as const) {
    if (stringWidth(line) <= width) return line;
    parts[drop] = undefined;
    line = compose(parts);
  }
  return fitWidth(line, width);
}

function bar(ratio: number): string {
  const filled = Math.round(ratio * BAR_CELLS);
  return `${'█'.repeat(filled)}${'░'.repeat(BAR_CELLS - filled)}`;
}

/** At most `width` columns on screen (wide characters count twice), cut with "…". */
export function fitWidth(text: string, width: number): string {
  if (stringWidth(text) <= width) return text;
  let cut = '';
  for (const character of text) {
    if (stringWidth(`${cut}${character}…`) > width) break;
    cut += character;
  }
  return `${cut}…`;
}
