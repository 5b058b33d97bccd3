/** Positions in the input text, counted as an editor counts them. */

const BOM = '\uFEFF';

/**
 * No BOM, and `\n` for CRLF and lone CR alike, so line numbers match what an editor shows. Done
 * once for every format: detection and JSON.parse need it as much as the CSV reader.
 */
export function normalizeText(text: string): string {
  const withoutBom = text.startsWith(BOM) ? text.slice(1) : text;
  return withoutBom.replace(/\r\n?/g, '\n');
}

export function firstContentLine(text: string): { line: number; text: string } | null {
  const lines = text.split('\n');
  const index = lines.findIndex((line) => line.trim() !== '');
  return index === -1 ? null : { line: index + 1, text: (lines[index] ?? '').trim() };
}

export function lineAt(text: string, position: number): number {
  return text.slice(0, position).split('\n').length;
}
