/** A plain list: one entry a line, the way people paste them. */
import type { InputRow } from './model.js';

/** One line of a plain list as a row of its one column; null for a blank or a comment. */
export function listRow(raw: string, line: number, column: string): InputRow | null {
  const value = cleanListLine(raw);
  return value === '' ? null : { line, record: { [column]: value } };
}

/** Tolerates `# comments` (whole-line or after a space), surrounding quotes and trailing commas. */
function cleanListLine(raw: string): string {
  const line = raw.trim();
  if (line.startsWith('#')) return '';
  const withoutComment = line.replace(/\s+#.*$/, '');
  return unquote(withoutComment.replace(/[,;]+$/, ''));
}

export function unquote(text: string): string {
  const trimmed = text.trim();
  const quoted = /^(["'])(.*)\1$/s.exec(trimmed);
  return quoted === null ? trimmed : (quoted[2] ?? '').trim();
}
