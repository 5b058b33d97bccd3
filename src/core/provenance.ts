import type { CompaniesMeta } from '../api/index.js';
import { fillRateSentence } from '../ui/closing.js';

const SPARSE_BELOW_PERCENT = 50;

/**
 * Where the data came from, kept in front of the person, one short sentence a line (the first line
 * of the summary already says how many rows): the source, the scope, then, for each field the
 * dataset rarely fills, how rarely.
 */
export function provenanceLine(meta: CompaniesMeta | undefined): string {
  const lines: string[] = [];
  const source = meta?.source;
  if (source) {
    const detail = [source.method, source.history_since ? `since ${source.history_since}` : undefined].filter(Boolean).join(', ');
    lines.push(`Source: ${source.dataset ?? source.publisher ?? 'unknown'}${detail ? ` (${detail})` : ''}.`);
  }
  if (meta?.scope) lines.push(`Scope: ${meta.scope}.`);
  for (const [field, percent] of sparseFields(meta)) {
    const sentence = fillRateSentence(field, percent);
    lines.push(`${sentence[0]?.toUpperCase()}${sentence.slice(1)}.`);
  }
  return lines.join('\n');
}

function sparseFields(meta: CompaniesMeta | undefined): Array<[string, number]> {
  const rates = meta?.field_fill_rates ?? {};
  return Object.entries(rates).filter((entry): entry is [string, number] => typeof entry[1] === 'number' && entry[1] < SPARSE_BELOW_PERCENT);
}
