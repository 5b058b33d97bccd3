import type { CompaniesMeta } from '../api/index.js';
import { fillRateSentence } from '../ui/closing.js';
import { formatCount } from '../ui/format-count.js';

const SPARSE_BELOW_PERCENT = 50;

/**
 * One line that keeps where the data came from in front of the person: rows, source, scope; then,
 * for the fields the dataset rarely fills, one plain sentence each.
 */
export function provenanceLine(rows: number, meta: CompaniesMeta | undefined): string {
  const parts = [`${formatCount(rows)} ${rows === 1 ? 'company' : 'companies'}`];
  const source = meta?.source;
  if (source) {
    const detail = [source.method, source.history_since ? `since ${source.history_since}` : undefined].filter(Boolean).join(', ');
    parts.push(`source: ${source.dataset ?? source.publisher ?? 'unknown'}${detail ? ` (${detail})` : ''}`);
  }
  if (meta?.scope) parts.push(`scope: ${meta.scope}`);
  const sparse = sparseFields(meta).map(([field, percent]) => `${fillRateSentence(field, percent)}.`);
  return [parts.join(' · '), ...sparse.map((sentence) => `${sentence[0]?.toUpperCase()}${sentence.slice(1)}`)].join('\n');
}

function sparseFields(meta: CompaniesMeta | undefined): Array<[string, number]> {
  const rates = meta?.field_fill_rates ?? {};
  return Object.entries(rates).filter((entry): entry is [string, number] => typeof entry[1] === 'number' && entry[1] < SPARSE_BELOW_PERCENT);
}
