/**
 * An answer's bytes as text, in the charset its Content-Type declares (UTF-8 when it declares none).
 * A byte that is not valid in that charset is refused, never turned silently into U+FFFD: a company
 * name with a replacement character in it would be written to every file as if it were data.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { TextDecoder } from 'node:util';

export type AnswerText = { ok: true; text: string } | { ok: false; problem: string };

/** The decoder of the charset a Content-Type declares (UTF-8 when none); undefined for one Node does not know. */
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

/**
 * The text of a 2xx answer, a leading byte-order mark left out (JSON.parse refuses one). `chunks` is
 * emptied: no bytes of a 32 MiB answer stay alive beside its text while it is parsed (issue 41).
 */
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

/**
 * The chunks as one text. They are joined and decoded in one call (a flat string, no pieces left
 * for the collector), and the array is emptied so the bytes are let go before the text is parsed.
 */
function decodeAll(decoder: TextDecoder, chunks: Buffer[]): string {
  return decoder.decode(Buffer.concat(chunks.splice(0)));
}
