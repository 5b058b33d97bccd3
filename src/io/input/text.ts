/** Positions in the input text, counted as an editor counts them. */

export function firstContentLine(text: string): { line: number; text: string } | null {
  const lines = text.split('\n');
  const index = lines.findIndex((line) => line.trim() !== '');
  return index === -1 ? null : { line: index + 1, text: (lines[index] ?? '').trim() };
}

export function lineAt(text: string, position: number): number {
  return text.slice(0, position).split('\n').length;
}
