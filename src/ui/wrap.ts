import stringWidth from 'string-width';

/**
 * Text wrapped to `width` columns at spaces, for a terminal that would otherwise break lines
 * wherever the edge falls ("no email 4" / "57"). Each line keeps its own breaks; a continuation
 * starts under the first word of its line (its leading spaces, plus `hang`). A word is never cut:
 * one wider than the terminal is left for the terminal to wrap.
 */
export function wrapWords(text: string, width: number, hang = 0): string {
  return text
    .split('\n')
    .map((line) => wrapLine(line, width, hang))
    .join('\n');
}

function wrapLine(line: string, width: number, hang: number): string {
  if (stringWidth(line) <= width) return line;
  // A continuation starts under the line's text: after its indent, or under the column of a
  // "term  description" line.
  const column = /^\s*\S+(?: \S+)*? {2,}(?=\S)/.exec(line)?.[0].length ?? /^ */.exec(line)![0].length + hang;
  const indent = ' '.repeat(Math.min(column, Math.max(0, width - 10)));
  const chunks = line.match(/\s*\S+/g) ?? [];
  const lines: string[] = [];
  let current = '';
  for (const chunk of chunks) {
    const joined = `${current}${chunk}`;
    if (stringWidth(joined) <= width || current.trim() === '') current = joined;
    else {
      lines.push(current);
      const word = chunk.trimStart();
      // A word too long for the indent starts the line; one wider than the terminal is left whole.
      current = stringWidth(`${indent}${word}`) <= width ? `${indent}${word}` : word;
    }
  }
  lines.push(current);
  return lines.join('\n');
}

/** A shell word: quoted parts stay whole ("united states" is one word). */
const SHELL_WORD = /(?:"[^"]*"|'[^']*'|\S)+/g;

/**
 * Help text as a terminal of `width` columns shows it: a line that is still too wide is wrapped
 * at spaces under its own indent, and an example (`  $ prospect …`) is continued with ` \` on
 * lines indented further, so that it still runs when copied whole.
 */
export function wrapHelpText(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => {
      if (stringWidth(line) <= width) return line;
      const example = /^(\s*)\$ /.exec(line);
      return example ? wrapExample(line, example[1]!.length, width) : wrapWords(line, width);
    })
    .join('\n');
}

function wrapExample(line: string, indent: number, width: number): string {
  const words = line.slice(indent).match(SHELL_WORD)?.slice(1) ?? [];
  const more = ' '.repeat(indent + 4);
  const lines: string[] = [];
  let current = `${' '.repeat(indent)}$`;
  let first = true;
  for (const word of words) {
    // Room for the " \" that continues the line; the first word after "$" goes on it whatever its width.
    if (first || stringWidth(`${current} ${word}`) + 2 <= width) current = `${current} ${word}`;
    else {
      lines.push(`${current} \\`);
      current = `${more}${word}`;
    }
    first = false;
  }
  lines.push(current);
  return lines.join('\n');
}
