/**
 * Reading a secret without it ever being an argument (shell history, `ps`): piped stdin, or a
 * prompt on the terminal that echoes nothing.
 */
import type { Writable } from 'node:stream';
import { CliError, ExitCode, UsageError } from '../exit-codes.js';

export interface SecretSource {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
  /** Where the prompt goes: stderr, so that stdout stays clean. */
  prompt: Writable;
}

/** `key`: the setting read, named in the hint of an empty stdin. */
export async function readSecret(source: SecretSource, label: string, key = 'api-key'): Promise<string> {
  return source.stdin.isTTY && source.stdin.setRawMode
    ? promptHidden(source, label)
    : readPiped(source.stdin, label, key);
}

/** `printf %s "$KEY" | prospect config set api-key`: one line; a trailing newline is not part of it. */
async function readPiped(stdin: NodeJS.ReadableStream, label: string, key: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  const lines = Buffer.concat(chunks)
    .toString('utf8')
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '');
  if (lines.length === 0) {
    throw new UsageError(
      `no ${label} on stdin.`,
      `Pipe it in (printf %s "$VALUE" | prospect config set ${key}) or run the command on a terminal to be prompted.`,
    );
  }
  if (lines.length > 1) throw new UsageError(`expected the ${label} on one line of stdin, got ${lines.length} lines.`);
  return lines[0]!.trim();
}

const ENTER = new Set(['\r', '\n']);
const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const CTRL_U = '\u0015';
const BACKSPACE = new Set(['\u007f', '\b']);

/** A terminal prompt in raw mode: nothing is echoed; backspace and Ctrl-U edit; Ctrl-C cancels (exit 130). */
function promptHidden(source: SecretSource, label: string): Promise<string> {
  const { stdin, prompt } = source;
  prompt.write(`${label[0]!.toUpperCase()}${label.slice(1)} (input hidden): `);
  stdin.setRawMode!(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let typed = '';
    const finish = (outcome: () => void) => {
      stdin.removeListener('data', onData);
      stdin.setRawMode!(false);
      stdin.pause();
      prompt.write('\n');
      outcome();
    };
    const onData = (chunk: string | Buffer) => {
      // A paste arrives as one chunk; escape sequences (arrow keys) are dropped with the other controls.
      for (const char of String(chunk).replace(/\u001b\[[0-9;]*[A-Za-z~]/g, '')) {
        if (ENTER.has(char) || (char === CTRL_D && typed !== '')) return finish(() => resolve(typed));
        if (char === CTRL_C || char === CTRL_D)
          return finish(() => reject(new CliError('cancelled; nothing was stored.', ExitCode.interrupted)));
        if (BACKSPACE.has(char)) typed = [...typed].slice(0, -1).join('');
        else if (char === CTRL_U) typed = '';
        else if (char >= ' ') typed += char;
      }
    };
    stdin.on('data', onData);
  });
}
