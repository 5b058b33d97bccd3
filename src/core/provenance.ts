import type { CompaniesMeta } from '../api/index.js';
import { formatCount } from '../ui/format-count.js';

const SPARSE_BELOW_PERCENT = 50;

/** One line that keeps where the data came from in front of the person: rows, source, scope, sparse fields. */
export function provenanceLine(rows: number, meta: CompaniesMeta | undefined): string {
  const parts = [`${formatCount(rows)} ${rows === 1 ? 'company' : 'companies'}`];
  const source = meta?.source;
  if (source) {
    const detail = [source.method, source.history_since ? `since ${source.history_since}` : undefined].filter(Boolean).join(', ');
    parts.push(`source: ${source.dataset ?? source.publisher ?? 'unknown'}${detail ? ` (${detail})` : ''}`);
  }
  if (meta?.scope) parts.push(`scope: ${meta.scope}`);
  const sparse = sparseFields(meta);
  if (sparse.length > 0) parts.push(`sparse: ${sparse.join(', ')}`);
  return parts.join(' · ');
}

export function sparseFields(meta: CompaniesMeta | undefined): string[] {
  const rates = meta?.field_fill_rates ?? {};
  return Object.entries(rates)
    .filter(([, percent]) => typeof percent === 'number' && percent < SPARSE_BELOW_PERCENT)
    .map(([field, percent]) => `${field} ${percent}%`);
}
