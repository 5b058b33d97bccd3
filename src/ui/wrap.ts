import stringWidth from 'string-width';

/**
 * Text wrapped to `width` columns at spaces, for a terminal that would otherwise break lines
 * wherever the edge falls ("no email 4" / "57"). Each line keeps its own breaks; a continuation
 * starts under the first word of its line (its leading spaces, plus `hang`). Only a single word
 * wider than the whole line is cut, as the terminal would cut it.
 */
export function wrapWords(text: string, width: number, hang = 0): string {
  return text
    .split('\n')
    .map((line) => wrapLine(line, width, hang))
    .join('\n');
}

function wrapLine(line: string, width: number, hang: number): string {
  if (stringWidth(line) <= width) return line;
  const lead = /^ */.exec(line)![0];
  const indent = ' '.repeat(Math.min(lead.length + hang, Math.max(0, width - 10)));
  const words = line.slice(lead.length).split(/ +/);
  const lines: string[] = [];
  let current = lead;
  let empty = true;
  for (const word of words) {
    const joined = empty ? `${current}${word}` : `${current} ${word}`;
    if (stringWidth(joined) <= width || empty) {
      current = joined;
      empty = false;
    } else {
      lines.push(current);
      current = `${indent}${word}`;
    }
    while (stringWidth(current) > width) {
      const [head, rest] = cutAt(current, width);
      lines.push(head);
      current = `${indent}${rest}`;
    }
  }
  lines.push(current);
  return lines.join('\n');
}

/** The first `width` columns of `text`, and the rest. */
function cutAt(text: string, width: number): [string, string] {
  let head = '';
  for (const character of text) {
    if (stringWidth(head + character) > width) break;
    head += character;
  }
  // A terminal narrower than one character still gets one a line: the loop above must move on.
  if (head === '') head = String.fromCodePoint(text.codePointAt(0)!);
  return [head, text.slice(head.length)];
}
