/**
 * The sandbox's defaults and small helpers, for `prospect sandbox`'s flags and help (a start-up
 * module: README "Start-up").
 */
export { DEFAULT_COMPANIES, MAX_COMPANIES } from './dataset/limits.js';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 4010;
export const DEFAULT_SEED = 1;

/** The bounds the flags and the options share. */
export const MAX_PORT = 65535;
export const MAX_SEED = 0xffffffff;
/** The longest latency, or latency spike, a response may be given (ms). */
export const MAX_LATENCY_MS = 600_000;

/** The control-plane counters (never delayed, failed or counted). */
export const STATS_PATH = '/_sandbox/stats';

export function todayUtc(): string {
  return new Date().toISOString().slice(0, 10);
}

/** A real calendar day written YYYY-MM-DD. */
export function isIsoDay(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const t = Date.parse(`${text}T00:00:00Z`);
  return Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === text;
}
