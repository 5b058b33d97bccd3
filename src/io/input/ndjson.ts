/** NDJSON: one JSON value a line; a broken line is reported by its number, the others are read. */
import { isRecord } from '../../util/is-record.js';
import { columnNotFound, findColumn, listColumnName } from './columns.js';
import { cellText, JsonDepth, jsonTooDeep, parseJson, recordOfText } from './json.js';
import { limitsOf } from './limits.js';
import type { InputProblem, InputRow, ParseOptions } from './model.js';

/**
 * NDJSON as it arrives, one line at a time. A stream cannot wait for the last object, so the entry
 * column is the one the first object has, and strings before any object are entries of the list's
 * own column; the header grows with every field seen.
 */
export class NdjsonLineReader {
  private column: string | null | undefined;
  private readonly fields = new Set<string>();

  /**
   * `entryOnly`: rows hold the entry column alone. `contacts` needs nothing else, and turning every
   * field of every company into text (its technologies array as JSON) cost it about a tenth of its
   * CPU time over 140,000 companies.
   */
  constructor(
    private readonly options: ParseOptions,
    private readonly onProblem: (problem: InputProblem) => void,
    private readonly entryOnly = false,
  ) {}

  /** The entry column, once the first value has decided it; null when the first object lacks it. */
  get entryColumn(): string | null | undefined {
    return this.column;
  }

  /**
   * Every field of every object so far, in first-seen order, the entry column first if only strings
   * had it (not kept when `entryOnly`).
   */
  get header(): string[] {
    const fields = [...this.fields];
    return typeof this.column === 'string' && !this.fields.has(this.column) ? [this.column, ...fields] : fields;
  }

  row(raw: string, line: number): InputRow | null {
    if (raw.trim() === '') return null;
    const { jsonDepth } = limitsOf(this.options.limits);
    if (new JsonDepth(jsonDepth).feed(raw) !== null) throw jsonTooDeep(this.options.origin, line, jsonDepth);
    const parsed = parseJson(raw);
    if (!parsed.ok) {
      this.onProblem({ line, message: `not valid JSON (${parsed.error})` });
      return null;
    }
    const { value } = parsed;
    if (isRecord(value)) {
      if (this.column === undefined) {
        this.column = findColumn(Object.keys(value), this.options);
        if (this.column === null) this.onProblem(columnNotFound(Object.keys(value), this.options, line));
      }
      if (!this.entryOnly) {
        for (const name of Object.keys(value)) this.fields.add(name);
        return { line, record: recordOfText(value) };
      }
      return { line, record: typeof this.column === 'string' ? { [this.column]: cellText(value[this.column]) } : {} };
    }
    if (typeof value !== 'string') {
      this.onProblem({ line, message: 'expected a JSON object or string' });
      return null;
    }
    if (this.column === undefined) this.column = listColumnName(this.options);
    return this.column === null ? null : { line, record: { [this.column]: value } };
  }
}
