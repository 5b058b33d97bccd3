/**
 * A faster JSON.parse for the one large body prospect reads again and again: a companies page,
 * `{"data":[{"domain":…},{"domain":…},…],"meta":{…},"next_cursor":…}`, 1 000 rows of about 2 KB.
 *
 * JSON.parse of a whole page needs the page as one string: 1.9 MB of UTF-8 becomes a 3.8 MB
 * two-byte string as soon as one name holds a character beyond Latin-1, and a string that size is
 * allocated where only a full garbage collection frees it, so a long export's memory climbed by a
 * few megabytes a page between full collections. Here the rows are cut apart in the bytes, at the
 * `},{"domain":` between them, and each is decoded and parsed on its own: small strings, freed young,
 * and about a fifth less CPU.
 *
 * It returns exactly what `JSON.parse(text)` returns, or `undefined`, and then the caller parses the
 * text as before (so every malformed body fails, and is reported, exactly as before):
 * - A raw `{"` cannot occur inside a JSON string (a raw quote ends it), so the cuts are always
 *   between values; a cut made at the wrong depth (inside a nested array of objects, or in `meta`)
 *   leaves a piece with an unclosed bracket or trailing text, which JSON.parse rejects.
 * - When every piece parses, the text they were cut from is valid JSON whose value is the same
 *   object: the same keys and values in the same order.
 * - Anything else is left to the caller: a body that does not start with `{"data":[{"domain":`
 *   (white space, a byte order mark, another key order), bytes that are not valid UTF-8 (decoding a
 *   piece must equal decoding the whole), a `"data"` anywhere after the rows (a second `data` key
 *   would be the one JSON.parse keeps).
 */
import { isUtf8 } from 'node:buffer';

const PREFIX = Buffer.from('{"data":[{"domain":');
const BETWEEN_ROWS = Buffer.from('},{"domain":');
const AFTER_ROWS = Buffer.from('}],"');
const DATA_KEY = Buffer.from('"data"');
/** Where the first row starts: just after `{"data":[`. */
const FIRST_ROW = '{"data":['.length;
/** Bounds the search for the end of the rows (each try parses the last row again). */
const MAX_END_TRIES = 8;
const NOT_JSON = Symbol('not JSON');

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

export function parseCompaniesPageBytes(body: Buffer): Record<string, unknown> | undefined {
  if (body.length < PREFIX.length || body.compare(PREFIX, 0, PREFIX.length, 0, PREFIX.length) !== 0) return undefined;
  if (!isUtf8(body)) return undefined;
  try {
    const data: unknown[] = [];
    let start = FIRST_ROW;
    for (let next = body.indexOf(BETWEEN_ROWS, start); next !== -1; next = body.indexOf(BETWEEN_ROWS, start)) {
      data.push(JSON.parse(body.toString('utf8', start, next + 1)));
      start = next + 2;
    }
    // The rows end at a `}],"`; one inside the last row (an array of objects before another key)
    // leaves that row unclosed, so the first cut whose piece parses is the real end.
    let end = body.indexOf(AFTER_ROWS, start);
    for (let tries = 1; ; tries++) {
      if (end === -1 || tries > MAX_END_TRIES) return undefined;
      const last = tryParse(body.toString('utf8', start, end + 1));
      if (last !== NOT_JSON) {
        data.push(last);
        break;
      }
      end = body.indexOf(AFTER_ROWS, end + 1);
    }
    // A second `data` key after the rows would win in JSON.parse: leave any mention of one to it.
    if (body.indexOf(DATA_KEY, end + 2) !== -1) return undefined;
    // The rest of the page, with an empty array in the place of the rows.
    const page: unknown = JSON.parse(`{"data":[]${body.toString('utf8', end + 2)}`);
    if (typeof page !== 'object' || page === null || Array.isArray(page)) return undefined;
    const record = page as Record<string, unknown>;
    record.data = data;
    return record;
  } catch {
    return undefined;
  }
}
