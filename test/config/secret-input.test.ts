import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readSecret, type SecretSource } from '../../src/config/secret-input.js';
import { CliError, ExitCode, UsageError } from '../../src/exit-codes.js';

const KEY = 'sk_live_secret_input_f00d';

function piped(text: string): SecretSource {
  const stdin = new PassThrough();
  stdin.end(text);
  return { stdin, prompt: new PassThrough() };
}

/** A fake terminal: raw mode is recorded, keystrokes are written by the test. */
function terminal(): { source: SecretSource; echoed: () => string; rawModes: boolean[]; type: (text: string) => void } {
  const stdin = Object.assign(new PassThrough(), { isTTY: true, rawModes: [] as boolean[] });
  const rawModes: boolean[] = [];
  const setRawMode = (mode: boolean) => rawModes.push(mode);
  const prompt = new PassThrough();
  const written: Buffer[] = [];
  prompt.on('data', (chunk: Buffer) => written.push(chunk));
  return {
    source: { stdin: Object.assign(stdin, { setRawMode }), prompt },
    echoed: () => Buffer.concat(written).toString('utf8'),
    rawModes,
    type: (text) => stdin.write(text),
  };
}

describe('readSecret from piped stdin', () => {
  it('takes the one line, without its newline or surrounding blanks', async () => {
    expect(await readSecret(piped(`${KEY}\n`), 'API key')).toBe(KEY);
    expect(await readSecret(piped(`  ${KEY}\r\n\n`), 'API key')).toBe(KEY);
    expect(await readSecret(piped(KEY), 'API key')).toBe(KEY);
  });

  it('refuses nothing, and refuses several lines', async () => {
    await expect(readSecret(piped(''), 'API key')).rejects.toBeInstanceOf(UsageError);
    await expect(readSecret(piped('\n\n'), 'API key')).rejects.toThrow(/no API key on stdin/);
    await expect(readSecret(piped('one\ntwo\n'), 'API key')).rejects.toThrow(/one line of stdin, got 2 lines/);
  });
});

describe('readSecret on a terminal', () => {
  it('echoes nothing of what is typed, and leaves raw mode on the way out', async () => {
    const tty = terminal();
    const result = readSecret(tty.source, 'API key');
    tty.type(KEY.slice(0, 5));
    tty.type(`${KEY.slice(5)}\r`);
    expect(await result).toBe(KEY);
    expect(tty.echoed()).toBe('API key (input hidden): \n');
    expect(tty.rawModes).toEqual([true, false]);
  });

  it('handles backspace, Ctrl-U and arrow keys', async () => {
    const tty = terminal();
    const result = readSecret(tty.source, 'API key');
    tty.type('wrong\u0015');
    tty.type('abcX\u007f\u001b[Dd\n');
    expect(await result).toBe('abcd');
  });

  it('Ctrl-C cancels with the interrupted exit code and stores nothing', async () => {
    const tty = terminal();
    const result = readSecret(tty.source, 'API key');
    tty.type('half\u0003');
    const error = await result.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(ExitCode.interrupted);
    expect(tty.rawModes).toEqual([true, false]);
  });
});
