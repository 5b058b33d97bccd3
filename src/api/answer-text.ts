/**
 * An answer's bytes as text, in the charset its Content-Type declares (UTF-8 when it declares none).
 * A byte that is not valid in that charset is refused, never turned silently into U+FFFD: a company
 * name with a replacement character in it would be written to every file as if it were data.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { TextDecoder } from 'node:util';

export type AnswerText = { ok: true; text: string } | { ok: false; problem: string };

/** The `charset` parameter of a Content-Type, lower-cased; undefined when there is none. */
export function declaredCharset(contentType: string | string[] | undefined): string | undefined {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(value ?? '');
  return match?.[1]?.toLowerCase();
}

/**
 * The text of a 2xx answer, a leading byte-order mark left out (JSON.parse refuses one). `chunks` is
 * emptied: no bytes of a 32 MiB answer stay alive beside its text while it is parsed (issue 41).
 */
export function answerText(chunks: Buffer[], headers: IncomingHttpHeaders): AnswerText {
  const charset = declaredCharset(headers['content-type']) ?? 'utf-8';
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset, { fatal: true });
  } catch {
    return {
      ok: false,
      problem: `an answer in a character set prospect does not know (charset=${charset.slice(0, 40)})`,
    };
  }
  try {
    // TextDecoder drops a BOM of its own encoding; one of another (UTF-8's read as Latin-1) is left.
    return { ok: true, text: decodeAll(decoder, chunks).replace(/^\uFEFF/, '') };
  } catch {
    return { ok: false, problem: `an answer that is not valid ${decoder.encoding} (a byte no character has)` };
  }
}

/** The text of an error answer, only to quote it: lenient, as it is never data. Empties `chunks`. */
export function errorAnswerText(chunks: Buffer[], headers: IncomingHttpHeaders): string {
  const charset = declaredCharset(headers['content-type']) ?? 'utf-8';
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  return decodeAll(decoder, chunks);
}

/**
 * The chunks as one text. They are joined and decoded in one call (a flat string, no pieces left
 * for the collector), and the array is emptied so the bytes are let go before the text is parsed.
 */
function decodeAll(decoder: TextDecoder, chunks: Buffer[]): string {
  const bytes = Buffer.concat(chunks.splice(0));
  return decoder.decode(bytes);
}
