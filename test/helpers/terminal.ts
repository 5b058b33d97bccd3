/**
 * prospect on a real pseudo-terminal: `script` (util-linux) runs it on a pty whose size is set
 * with `stty` first, so stdout and stderr are a terminal as a person's are. `screenLines` replays
 * the bytes as a terminal shows them, for the few controls prospect's output uses.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import stringWidth from 'string-width';
import { finishCli, NODE_FLAGS, scratchDir, startCli, type CliOptions, type CliRun } from './cli.js';
import { findProgram } from './programs.js';

export const SCRIPT = findProgram('script');

export interface TerminalSize {
  columns: number;
  rows: number;
}

/** Starts prospect on a pty of this size; stdin of the child is the pty's keyboard (write "\x03" for Ctrl-C). */
export function startOnTerminal(args: string[], size: TerminalSize, options: CliOptions = {}): ChildProcess {
  return startCli(args, {
    ...options,
    wrap: (argv) => ({
      command: SCRIPT.command,
      // -e: script exits with the child's status; exec: the CLI is the pty's foreground process.
      args: [
        '-qec',
        `stty cols ${size.columns} rows ${size.rows}; exec ${[process.execPath, ...NODE_FLAGS, ...argv].map(shellQuote).join(' ')}`,
        '/dev/null',
      ],
    }),
  });
}

/**
 * Runs prospect on a 120x40 pty and types `answer` when the spend question ("Continue? [y/N") comes.
 * With `piped`, that text is prospect's stdin through a pipe, while the person answers on the terminal
 * (`companies … | contacts --stale verify`). `screen` is everything the terminal got.
 */
export async function answerOnTerminal(
  args: string[],
  answer: string,
  options: CliOptions & { piped?: string } = {},
): Promise<CliRun & { screen: string; asked: boolean }> {
  let feed = 'exec';
  if (options.piped !== undefined) {
    const file = join(await scratchDir(), 'stdin.txt');
    await writeFile(file, options.piped);
    feed = `cat ${shellQuote(file)} |`;
  }
  const child = startCli(args, {
    ...options,
    wrap: (argv) => ({
      command: SCRIPT.command ?? 'script',
      args: [
        '-qec',
        `stty cols 120 rows 40; ${feed} ${[process.execPath, ...NODE_FLAGS, ...argv].map(shellQuote).join(' ')}`,
        '/dev/null',
      ],
    }),
  });
  let screen = '';
  let asked = false;
  child.stdout!.on('data', (chunk: Buffer) => {
    screen += chunk.toString('utf8');
    if (!asked && screen.includes('Continue? [y/N')) {
      asked = true;
      child.stdin!.write(answer);
    }
  });
  const run = await finishCli(child, { ...options, timeoutMs: options.timeoutMs ?? 60_000 });
  return { ...run, screen, asked };
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The lines a terminal would show for `raw` (stdout and stderr share the pty): a carriage return
 * or ESC[G moves to the start of the line, ESC[K / ESC[0K erases to its end, ESC[2K erases it;
 * other control sequences (colours, cursor visibility, synchronized output) change no text.
 */
export function screenLines(raw: string): string[] {
  const lines: string[] = [];
  let line: string[] = [];
  let column = 0;
  for (const [token] of raw.matchAll(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]|\r|\n|[^\x1b\r\n]/gu)) {
    if (token === '\n') {
      lines.push(line.join('').trimEnd());
      line = [];
      column = 0;
    } else if (token === '\r' || token === '\x1b[G' || token === '\x1b[1G') {
      column = 0;
    } else if (token === '\x1b[K' || token === '\x1b[0K') {
      line = line.slice(0, column);
    } else if (token === '\x1b[2K') {
      line = line.slice(0, column).map(() => ' ');
    } else if (!token.startsWith('\x1b')) {
      line[column] = token;
      column += 1;
    }
  }
  lines.push(line.join('').trimEnd());
  return lines;
}

/** Lines of a box-drawn table (cli-table3's frame). */
export function tableLines(lines: readonly string[]): string[] {
  return lines.filter((line) => /^[┌│├└]/.test(line));
}

/** Columns a line takes on screen (wide characters count two). */
export function screenWidth(line: string): number {
  return stringWidth(line);
}
