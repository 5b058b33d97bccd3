/** An answer's bytes as text in its declared charset; a bad byte is refused, never written to files as U+FFFD. */
import type { IncomingHttpHeaders } from 'node:http';
import { TextDecoder } from 'node:util';

export type AnswerText = { ok: true; text: string } | { ok: false; problem: string };

/** The decoder of the declared charset; undefined for one Node does not know. */
function decoderOf(headers: IncomingHttpHeaders, fatal: boolean): { charset: string; decoder?: TextDecoder } {
  const contentType = headers['content-type'];
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(value ?? '')?.[1]?.toLowerCase() ?? 'utf-8';
  try {
    return { charset, decoder: new TextDecoder(charset, { fatal }) };
  } catch {
    return { charset };
  }
}

/** The text of a 2xx answer without a leading byte-order mark (JSON.parse refuses one). Empties `chunks`. */
export function answerText(chunks: Buffer[], headers: IncomingHttpHeaders): AnswerText {
  const { charset, decoder } = decoderOf(headers, true);
  if (decoder === undefined)
    return {
      ok: false,
      problem: `an answer in a character set prospect does not know (charset=${charset.slice(0, 40)})`,
    };
  try {
    // TextDecoder drops a BOM of its own encoding; one of another (UTF-8's read as Latin-1) is left.
    return { ok: true, text: decodeAll(decoder, chunks).replace(/^\uFEFF/, '') };
  } catch {
    return { ok: false, problem: `an answer that is not valid ${decoder.encoding} (a byte no character has)` };
  }
}

/** The text of an error answer, only to quote it: lenient, as it is never data. Empties `chunks`. */
export function errorAnswerText(chunks: Buffer[], headers: IncomingHttpHeaders): string {
  return decodeAll(decoderOf(headers, false).decoder ?? new TextDecoder('utf-8'), chunks);
}

/** Decoded in one call (a flat string); the array emptied so no bytes of a 32 MiB answer outlive it (issue 41). */
function decodeAll(decoder: TextDecoder, chunks: Buffer[]): string {
  return decoder.decode(Buffer.concat(chunks.splice(0)));
}
