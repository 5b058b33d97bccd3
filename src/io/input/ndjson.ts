/** NDJSON: one JSON value a line; a broken line is reported by its number, the others are read. */
import { parseJson, tableFromJsonValues, type JsonValueAt } from './json.js';
import type { InputProblem, InputTable, ParseOptions } from './model.js';

export function ndjsonTable(text: string, options: ParseOptions): InputTable {
  const values: JsonValueAt[] = [];
  const problems: InputProblem[] = [];
  text.split('\n').forEach((raw, index) => {
    if (raw.trim() === '') return;
    const parsed = parseJson(raw);
    if (parsed.ok) values.push({ line: index + 1, value: parsed.value });
    else problems.push({ line: index + 1, message: `not valid JSON (${parsed.error})` });
  });
  const table = tableFromJsonValues('ndjson', values, options);
  return { ...table, problems: [...problems, ...table.problems].sort((a, b) => a.line - b.line) };
}
