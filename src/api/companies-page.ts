/** The check of a companies page: its envelope, its shape (schemas.ts), then its technology entries shared. */
import { isRecord } from '../util/is-record.js';
import {
  CompaniesResponseSchema,
  checkSchema,
  type CompaniesResponse,
  type SchemaCheck,
  type TechnologyEntry,
} from './schemas.js';

export function checkCompaniesPage(json: unknown): SchemaCheck<CompaniesResponse> {
  const checked = checkSchema(CompaniesResponseSchema, withDataKey(json));
  if (checked.ok) shareTechnologyEntries(checked.value);
  return checked;
}

/**
 * Rows of a page that run the same technology (same category and version) share one entry, so a page waiting
 * its turn holds a fraction of the heap; nothing writes to an entry. Entries with extra fields, or a version that
 * is neither a string nor null, stay their own: comparing them would cost more than sharing saves.
 */
function shareTechnologyEntries(page: CompaniesResponse): void {
  const firstByName = new Map<string, TechnologyEntry>();
  for (const row of page.data) {
    const entries = row.technologies;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      const first = firstByName.get(entry.t);
      if (first === undefined) {
        if (shareable(entry)) firstByName.set(entry.t, entry);
      } else if (first.c === entry.c && first.v === entry.v && shareable(entry)) {
        entries[i] = first;
      }
    }
  }
}

function shareable(entry: TechnologyEntry): boolean {
  return (entry.v === null || typeof entry.v === 'string') && Object.keys(entry).length === 3;
}

/**
 * The rows under `data`, or under the one array-valued key of the envelope (`results`, `companies`,
 * `items`...): with exactly one such key the meaning is plain; with none or several `data` is left
 * missing, and the check names what it found. A bare array is the rows alone.
 */
export function withDataKey(json: unknown): unknown {
  if (Array.isArray(json)) return { data: json };
  if (!isRecord(json) || 'data' in json) return json;
  const arrays = Object.keys(json).filter((key) => Array.isArray(json[key]));
  if (arrays.length !== 1) return json;
  const [key] = arrays as [string];
  const { [key]: rows, ...rest } = json;
  return { ...rest, data: rows };
}
