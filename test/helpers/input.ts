/**
 * The streaming input reader (src/io/input/stream.ts, entries.ts) seen whole, for tests: a text
 * handed over in one chunk (or cut where a test says), read to its end, its rows or entries collected.
 */
import { domainEntries, emailEntries, streamEntries } from '../../src/io/input/entries.js';
import type { InputTable, ParseOptions } from '../../src/io/input/model.js';
import { streamEntryValues, streamRows } from '../../src/io/input/stream.js';

/** The text as chunks cut at these offsets (taken modulo its length, each once). */
export async function* chunked(text: string, cuts: number[] = []): AsyncGenerator<string> {
  let start = 0;
  for (const cut of [...new Set(cuts.map((at) => at % (text.length + 1)))].sort((a, b) => a - b)) {
    yield text.slice(start, cut);
    start = cut;
  }
  yield text.slice(start);
}

/** Every row of the text, as `prospect verify` reads them (default kind: email). */
export async function readTable(text: string, options: Partial<ParseOptions> = {}): Promise<InputTable> {
  const problems: InputTable['problems'] = [];
  const stream = await streamRows(
    chunked(text),
    { ...options, kind: options.kind ?? 'email' },
    { problem: (problem) => problems.push(problem), blank: () => {} },
  );
  const rows: InputTable['rows'] = [];
  for await (const row of stream.rows) rows.push(row);
  // A missing column is found before any row; problems come in line order.
  return {
    format: stream.format,
    header: stream.header(),
    column: stream.column(),
    rows,
    problems: problems.sort((a, b) => a.line - b.line),
  };
}

type CollectOptions = Omit<ParseOptions, 'kind'>;

/** Every accepted entry of the text, with what the collector counted on the way. */
export async function collectEntries(text: string, options: ParseOptions, cuts: number[] = []) {
  const collector = options.kind === 'domain' ? domainEntries() : emailEntries();
  const values: string[] = [];
  for await (const value of streamEntries(chunked(text, cuts), options, collector)) values.push(value);
  return {
    values,
    invalid: collector.invalid,
    problems: collector.problems,
    duplicates: collector.duplicates,
    blanks: collector.blanks,
    format: collector.inputFormat,
  };
}

export async function collectDomains(text: string, options: CollectOptions = {}) {
  const { values, ...rest } = await collectEntries(text, { ...options, kind: 'domain' });
  return { domains: values, ...rest };
}

export async function collectEmails(text: string, options: CollectOptions = {}) {
  const { values, ...rest } = await collectEntries(text, { ...options, kind: 'email' });
  return { emails: values, ...rest };
}

/** The raw values of the entry column with the lines they are on, before any check. */
export async function entryValues(
  text: string,
  options: ParseOptions,
): Promise<Array<{ value: string; line: number }>> {
  const values: Array<{ value: string; line: number }> = [];
  for await (const value of streamEntryValues(chunked(text), options, { problem: () => {}, blank: () => {} }))
    values.push(value);
  return values;
}
