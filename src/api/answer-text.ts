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

/** The text of a 2xx answer, a leading byte-order mark left out (JSON.parse refuses one). */
export function answerText(bytes: Buffer, headers: IncomingHttpHeaders): AnswerText {
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
    return { ok: true, text: decoder.decode(bytes).replace(/^\uFEFF/, '') };
  } catch {
    return { ok: false, problem: `an answer that is not valid ${decoder.encoding} (a byte no character has)` };
  }
}

/** The text of an error answer, only to quote it: lenient, as it is never data. */
export function errorAnswerText(bytes: Buffer, headers: IncomingHttpHeaders): string {
  const charset = declaredCharset(headers['content-type']) ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return bytes.toString('utf8');
  }
}
