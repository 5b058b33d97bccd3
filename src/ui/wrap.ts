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

/** A crontab entry: five time fields (or `@weekly` and the like), then the command. */
const CRONTAB_ENTRY = /^\s*(?:@[a-z]+|(?:[\d*][\d*,/-]*\s+){4}[\d*][\d*,/-]*)\s+\S/;

/**
 * Help text as a terminal of `width` columns shows it, every line still fit to paste: an example
 * (`  $ prospect …`, and the lines its ` \` continues) is continued with ` \` on lines indented
 * further, a `# comment` goes on as comment lines, a crontab entry (which no ` \` can continue) is
 * left whole for the terminal to wrap, and any other line is wrapped at spaces under its own indent.
 */
export function wrapHelpText(text: string, width: number): string {
  let continued = false;
  return text
    .split('\n')
    .map((line) => {
      const command = continued || /^\s*\$ /.test(line);
      continued = command && line.endsWith(' \\');
      if (stringWidth(line) <= width || CRONTAB_ENTRY.test(line)) return line;
      const indent = /^\s*/.exec(line)![0].length;
      if (command) return wrapCommand(line, indent, width, !/^\s*\$ /.test(line));
      const comment = /^(\s*)# /.exec(line);
      if (comment)
        return wrapWords(line.slice(comment[0].length), width - comment[0].length).replace(/^/gm, comment[0]);
      return wrapWords(line, width);
    })
    .join('\n');
}

/** A shell command over lines joined by ` \`; `continuation`: the line is itself one such (no `$` of its own). */
function wrapCommand(line: string, indent: number, width: number, continuation: boolean): string {
  const ends = line.endsWith(' \\');
  const body = ends ? line.slice(0, -2) : line;
  const words = body.slice(indent).match(SHELL_WORD) ?? [];
  const more = ' '.repeat(continuation ? indent : indent + 4);
  const lines: string[] = [];
  let current = `${' '.repeat(indent)}${words.shift() ?? ''}`;
  for (const word of words) {
    // Room for the " \" that continues the line; the first word goes on it whatever its width.
    if (stringWidth(`${current} ${word}`) + 2 <= width) current = `${current} ${word}`;
    else {
      lines.push(`${current} \\`);
      current = `${more}${word}`;
    }
  }
  lines.push(ends ? `${current} \\` : current);
  return lines.join('\n');
}
