import { formatCount } from './format-count.js';
import { formatDuration } from './duration.js';

/** What a finished run wrote, for the first line of its summary on a terminal. */
export interface Written {
  rows: number;
  /** The row's name, singular and plural: ['company', 'companies']. */
  noun: readonly [string, string];
  /** The file written, or undefined for stdout. */
  path: string | undefined;
  /** Of how many in all, when only some were written (count --top): "15 of 2,998 segments". */
  of?: number | undefined;
}

/** "Wrote 1,204 companies to shopify.csv in 3s." — where the output went, and how long it took, for every command. */
export function closingLine(written: Written, stdoutIsTerminal: boolean, elapsedMs: number): string {
  const some = written.of !== undefined && written.of > written.rows;
  const noun = (some ? written.of : written.rows) === 1 ? written.noun[0] : written.noun[1];
  const where = written.path ?? (stdoutIsTerminal ? 'the terminal' : 'stdout');
  const count = some ? `${formatCount(written.rows)} of ${formatCount(written.of!)}` : formatCount(written.rows);
  return `Wrote ${count} ${noun} to ${where} in ${elapsedText(elapsedMs)}.`;
}

function elapsedText(elapsedMs: number): string {
  return elapsedMs < 10_000 ? `${(elapsedMs / 1000).toFixed(1)}s` : formatDuration(elapsedMs / 1000);
}

/** The service's names for the fields it reports fill rates of, as a person says them. */
const FIELD_NAMES: Readonly<Record<string, string>> = {
  phone: 'phone numbers',
  linkedin_url: 'LinkedIn pages',
  description: 'descriptions',
};

/**
 * A fill rate said plainly: 10.6 → "phone numbers are known for about 1 in 10 companies in this
 * dataset". It describes the service's whole dataset, not this export, and says so.
 */
export function fillRateSentence(field: string, percent: number): string {
  const what = FIELD_NAMES[field] ?? `${field.replaceAll('_', ' ')} values`;
  return `${what} are known for ${proportion(percent)} companies in this dataset`;
}

function proportion(percent: number): string {
  if (percent <= 0) return 'none of the';
  if (percent < 1) return 'fewer than 1 in 100';
  if (percent >= 99.5) return 'all';
  if (percent >= 50) return `about ${Math.round(percent)} in 100`;
  return `about 1 in ${Math.round(100 / percent)}`;
}
