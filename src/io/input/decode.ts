/**
 * The bytes of an input as text, in pieces, whatever Excel or a CRM saved them as: UTF-16 (LE or
 * BE, told by its byte-order mark, as Excel's "Unicode Text" saves), UTF-8 with or without a BOM.
 * Anything else is refused before a call is made, naming the file, the line and what it looks like:
 * a Windows-1252 file read as UTF-8 would turn "bücher.de" into "b�cher.de", which matches nothing
 * (a do-not-contact list that silently removes nobody). The decoding is TextDecoder's, streaming.
 */
import { TextDecoder } from 'node:util';
import { UsageError } from '../../exit-codes.js';
import { shortForMessage } from './columns.js';
import { startsLikeZip } from './xlsx.js';

type Encoding = 'utf-8' | 'utf-16le' | 'utf-16be';

/** Byte-order marks, longest first; the mark stays in the text (normalizedChunks drops it). */
const BYTE_ORDER_MARKS: ReadonlyArray<{ bytes: readonly number[]; encoding: Encoding }> = [
  { bytes: [0xef, 0xbb, 0xbf], encoding: 'utf-8' },
  { bytes: [0xff, 0xfe], encoding: 'utf-16le' },
  { bytes: [0xfe, 0xff], encoding: 'utf-16be' },
];
const LONGEST_MARK = 3;

/**
 * A piece of input decoded at once, in bytes: small enough that its string (two bytes a character once one
 * letter is not Latin-1) stays in V8's young generation and dies cheaply, instead of the large-object space.
 */
const DECODED_PIECE_BYTES = 32 * 1024;

const SAVE_AS_UTF8 = 'Save it as UTF-8 (Excel: Save As > "CSV UTF-8")';

/** Decodes one input's bytes as they arrive: write() each chunk, then end(). */
class InputDecoder {
  /** The first bytes, kept until they say whether there is a byte-order mark. */
  private head: Buffer | undefined = Buffer.alloc(0);
  private decoder: TextDecoder | undefined;
  private encoding: Encoding = 'utf-8';
  /** Line breaks in the text decoded so far: where a bad byte is, for the message. */
  private lines = 0;

  constructor(private readonly origin: string) {}

  *write(chunk: Uint8Array): Generator<string> {
    let bytes = chunk;
    if (this.head !== undefined) {
      this.head = Buffer.concat([this.head, chunk]);
      if (this.head.length < LONGEST_MARK) return;
      bytes = this.start();
    }
    for (let start = 0; start < bytes.length; start += DECODED_PIECE_BYTES) {
      const text = this.decode(bytes.subarray(start, start + DECODED_PIECE_BYTES), true);
      if (text !== '') yield text;
    }
  }

  *end(): Generator<string> {
    if (this.head !== undefined) {
      const head = this.decode(this.start(), true);
      if (head !== '') yield head;
    }
    const rest = this.decode(new Uint8Array(0), false);
    if (rest !== '') yield rest;
  }

  /** Chooses the encoding from the head's byte-order mark; returns the head, to decode. */
  private start(): Buffer {
    const head = this.head!;
    this.head = undefined;
    if (startsLikeZip(head))
      throw new UsageError(
        `${this.origin} is a zip file (an Excel workbook?), which is read from a file, not from a pipe.`,
        'Give it with --domains-file FILE.xlsx (verify: --file FILE.xlsx), or save it as "CSV UTF-8".',
      );
    const mark = BYTE_ORDER_MARKS.find(({ bytes }) => bytes.every((byte, i) => head[i] === byte));
    this.encoding = mark?.encoding ?? 'utf-8';
    this.decoder = new TextDecoder(this.encoding, { fatal: true, ignoreBOM: true });
    return head;
  }

  private decode(bytes: Uint8Array, stream: boolean): string {
    let text: string;
    try {
      text = this.decoder!.decode(bytes, { stream });
    } catch {
      throw this.encoding === 'utf-8' ? this.notUtf8(bytes) : this.brokenUtf16(bytes);
    }
    if (this.encoding === 'utf-8' && text.includes('\u0000')) throw this.nulBytes(text);
    this.lines += lineBreaks(text);
    return text;
  }

  private notUtf8(piece: Uint8Array): UsageError {
    const bad = firstInvalidByte(piece);
    const line = this.lines + lineBreaksIn(piece.subarray(0, bad)) + 1;
    const shown = lineAround(piece, bad);
    return new UsageError(
      `${this.origin} line ${line} is not UTF-8 text: it looks like Windows-1252 (Excel's "CSV" on Windows) ` +
        `or another 8-bit encoding, there ${shown}; nothing was sent.`,
      `${SAVE_AS_UTF8}, or convert it: iconv -f windows-1252 -t utf-8 ${this.origin} > utf8.csv`,
    );
  }

  private brokenUtf16(piece: Uint8Array): UsageError {
    // The piece read leniently: the broken character is the first replacement character in it.
    const lenient = new TextDecoder(this.encoding, { ignoreBOM: true }).decode(piece);
    const line = this.lines + lineBreaks(lenient.slice(0, Math.max(0, lenient.indexOf('\uFFFD')))) + 1;
    return new UsageError(
      `${this.origin} starts with a ${this.encoding === 'utf-16le' ? 'UTF-16 LE' : 'UTF-16 BE'} byte-order ` +
        `mark, but line ${line} is not valid UTF-16 text; nothing was sent.`,
      'Save the file again from the program that made it (Excel: Save As > "CSV UTF-8").',
    );
  }

  private nulBytes(text: string): UsageError {
    const line = this.lines + lineBreaks(text.slice(0, text.indexOf('\u0000'))) + 1;
    return new UsageError(
      `${this.origin} line ${line} holds NUL bytes: it is not UTF-8 text (UTF-16 saved without a byte-order ` +
        `mark, or a binary file such as .xlsx); nothing was sent.`,
      `${SAVE_AS_UTF8}.`,
    );
  }
}

/** The bytes of `stream` as text, in pieces (see InputDecoder). */
export async function* decodeStream(stream: NodeJS.ReadableStream, origin: string): AsyncGenerator<string> {
  const decoder = new InputDecoder(origin);
  for await (const chunk of stream) {
    if (typeof chunk === 'string') {
      if (chunk !== '') yield chunk;
    } else yield* decoder.write(chunk);
  }
  yield* decoder.end();
}

function lineBreaks(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count += 1;
  return count;
}

function lineBreaksIn(bytes: Uint8Array): number {
  let count = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) count += 1;
  return count;
}

/**
 * Where in a piece the UTF-8 decoder first fails: the shortest prefix that a fresh strict decoder
 * refuses (streaming, so a character cut at the prefix's end is not a failure), found by halving.
 * A piece may start inside a character the previous piece began: those continuation bytes are skipped.
 */
function firstInvalidByte(piece: Uint8Array): number {
  let from = 0;
  while (from < Math.min(3, piece.length) && (piece[from]! & 0xc0) === 0x80) from += 1;
  const refuses = (end: number) => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(piece.subarray(from, end), { stream: true });
      return false;
    } catch {
      return true;
    }
  };
  let [low, high] = [from, piece.length];
  if (!refuses(high)) return from;
  while (high - low > 1) {
    const middle = (low + high) >>> 1;
    if (refuses(middle)) high = middle;
    else low = middle;
  }
  return low;
}

/** The line that holds byte `at`, read as Windows-1252, quoted as messages quote input (C1 controls dropped). */
function lineAround(piece: Uint8Array, at: number): string {
  // The byte may be the line break that ended a cut character: the line is the one before it.
  const start = at === 0 ? 0 : piece.lastIndexOf(0x0a, at - 1) + 1;
  const newline = piece.indexOf(0x0a, at);
  const text = new TextDecoder('windows-1252').decode(piece.subarray(start, newline === -1 ? piece.length : newline));
  return JSON.stringify(shortForMessage(text.replace(/[\u0080-\u009f]/g, '').trim()));
}
