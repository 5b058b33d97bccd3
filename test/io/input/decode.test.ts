/**
 * Input bytes as text (src/io/input/decode.ts): UTF-8 with or without a BOM, UTF-16 LE and BE told
 * by their BOM, however the bytes are cut into chunks; anything else refused with the file, the line
 * and what it looks like. The fixture bytes are made here with Buffer, never by the code under test.
 */
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeStream } from '../../../src/io/input/decode.js';

/** The bytes as a stream of chunks cut at these offsets (modulo the length, each once). */
function chunks(bytes: Buffer, cuts: number[] = []): Readable {
  const offsets = [...new Set(cuts.map((at) => at % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let start = 0;
  for (const cut of offsets) {
    pieces.push(bytes.subarray(start, cut));
    start = cut;
  }
  pieces.push(bytes.subarray(start));
  return Readable.from(pieces.filter((piece) => piece.length > 0));
}

async function decoded(bytes: Buffer, cuts: number[] = []): Promise<string> {
  let text = '';
  for await (const piece of decodeStream(chunks(bytes, cuts), 'list.csv')) text += piece;
  return text;
}

async function refusal(bytes: Buffer): Promise<{ message: string; hint?: string; exitCode: number }> {
  return decoded(bytes).then(
    () => {
      throw new Error('the bytes were accepted');
    },
    (error: { message: string; hint?: string; exitCode: number }) => error,
  );
}

/** What Excel's "Unicode Text" (UTF-16 LE) or a big-endian tool writes: a BOM, then the text. */
function utf16(text: string, order: 'le' | 'be'): Buffer {
  const little = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
  return order === 'le' ? little : Buffer.from(little).swap16();
}

const TEXT = 'Email,Name\r\nada@example.com,Ada Lovelace\r\nzoë@bücher.de,Zoë 😀\r\n';

describe('decodeStream', () => {
  it.each([
    ['UTF-8', Buffer.from(TEXT, 'utf8')],
    ['UTF-8 with a BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(TEXT, 'utf8')])],
    ['UTF-16 LE with a BOM', utf16(TEXT, 'le')],
    ['UTF-16 BE with a BOM', utf16(TEXT, 'be')],
  ])('%s is the same text (a BOM kept as U+FEFF for the reader to drop), however it is cut', async (_name, bytes) => {
    const bom = bytes[0] === 0x45 ? '' : '\uFEFF';
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { maxLength: 6 }), async (cuts) => {
        expect(await decoded(bytes, cuts)).toBe(bom + TEXT);
      }),
      { numRuns: 60 },
    );
  });

  it('reads inputs of a byte or two, and nothing', async () => {
    expect(await decoded(Buffer.from('a'))).toBe('a');
    expect(await decoded(Buffer.from('ab'))).toBe('ab');
    expect(await decoded(Buffer.alloc(0))).toBe('');
    expect(await decoded(Buffer.from([0xff, 0xfe]))).toBe('\uFEFF');
  });

  it('refuses Windows-1252 with the file, the line, the encoding and the line as it was meant (exit 2)', async () => {
    const latin = Buffer.from('Website\r\nacme.com\r\nwww.b\xfccher.de\r\n', 'latin1');
    const error = await refusal(latin);
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe(
      'list.csv line 3 is not UTF-8 text: it looks like Windows-1252 (Excel\'s "CSV" on Windows) or another 8-bit encoding, there "www.bücher.de"; nothing was sent.',
    );
    expect(error.hint).toContain('iconv -f windows-1252 -t utf-8 list.csv');
    // The bad byte at the end of a line, and on the first line, are found on their own line.
    expect((await refusal(Buffer.from('caf\xe9\r\nx.com\r\n', 'latin1'))).message).toMatch(
      /^list\.csv line 1 .* there "café"/,
    );
    expect((await refusal(Buffer.from('a.com\nb.com\ncaf\xe9\n', 'latin1'))).message).toMatch(/^list\.csv line 3 /);
  });

  it('finds the line of a bad byte far into the input, past many chunks', async () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `company-${i}.com`);
    const bytes = Buffer.concat([
      Buffer.from(`${lines.join('\n')}\n`, 'utf8'),
      Buffer.from('m\xfcnchen.de\n', 'latin1'),
    ]);
    expect((await refusal(bytes)).message).toMatch(/^list\.csv line 5001 .* there "münchen\.de"/);
  });

  it('refuses UTF-16 without a BOM (NUL bytes) and broken UTF-16 after a BOM', async () => {
    expect((await refusal(Buffer.from('a.com\nb.com\n', 'utf16le'))).message).toMatch(
      /^list\.csv line 1 holds NUL bytes: it is not UTF-8 text \(UTF-16 saved without a byte-order mark/,
    );
    const lone = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from('a.com\n', 'utf16le'),
      Buffer.from([0x00, 0xd8, 0x41, 0x00]),
    ]);
    expect((await refusal(lone)).message).toMatch(
      /^list\.csv starts with a UTF-16 LE byte-order mark, but line 2 is not valid UTF-16 text/,
    );
  });
});
