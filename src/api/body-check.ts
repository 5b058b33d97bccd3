/** A complete 2xx answer read into a checked value, or its problem in one line (HTML, cut JSON, a shape). */
import type { IncomingHttpHeaders } from 'node:http';
import type { SchemaCheck } from './schemas.js';

/** `cut`: the body is empty or JSON that does not parse (not HTML): most likely an answer that ended early. */
export type BodyCheck<T> = { ok: true; value: T } | { ok: false; problem: string; hint?: string; cut?: boolean };

export async function checkJsonBody<T>(
  check: (json: unknown) => SchemaCheck<T>,
  status: number,
  headers: IncomingHttpHeaders,
  bodyText: string,
  bounds: JsonBounds,
  onBody?: (json: unknown) => void,
): Promise<BodyCheck<T>> {
  if (bodyText.trim() === '') return { ok: false, problem: `an empty body (status ${status})`, cut: true };
  const tooMuch = jsonShapeProblem(bodyText, bounds);
  if (tooMuch !== undefined) return { ok: false, problem: `${tooMuch} (status ${status})` };
  let json: unknown;
  try {
    json = JSON.parse(bodyText);
  } catch (error) {
    const html = /html/i.test(String(headers['content-type'] ?? '')) || /^\s*</.test(bodyText);
    const hint = 'A proxy or a web page answered instead of the service; check the base URL.';
    if (html) return { ok: false, problem: `HTML, not JSON (status ${status})`, hint };
    const why = error instanceof Error ? `: ${error.message.replace(/\s+/g, ' ').slice(0, 120)}` : '';
    return { ok: false, problem: `truncated or invalid JSON (status ${status})${why}`, cut: true };
  }
  if (onBody) {
    onBody(json);
    await new Promise((resolve) => setImmediate(resolve));
  }
  const checked = check(json);
  if (checked.ok) return checked;
  return { ok: false, problem: `an unexpected shape (status ${status}): ${checked.problem}` };
}

/** What JSON.parse may build of one answer: nesting, members of one object or array, and values in all. */
type JsonBounds = { depth: number; members: number; values: number };

/** Pages are 5 levels deep; thousands deep would overflow the stack of whatever walks it later. */
export const MAX_JSON_DEPTH = 64;
/** A page holds at most 1,000 rows and a row a few hundred technologies; no object of the contract has 100 keys. */
const MAX_JSON_MEMBERS = 10_000;

/** The bounds of an answer under a cap of `capBytes`: a value for every 128 bytes (BENCHMARKS.md section 10). */
export function jsonBoundsOf(capBytes: number): JsonBounds {
  return { depth: MAX_JSON_DEPTH, members: MAX_JSON_MEMBERS, values: Math.max(100_000, Math.floor(capBytes / 128)) };
}

/** The first bound a JSON text breaks, in words, before anything is built of it: one pass, strings skipped. */
export function jsonShapeProblem(text: string, bounds: JsonBounds): string | undefined {
  const members: number[] = [];
  let values = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c) i++;
      else if (char === 0x22) inString = false;
      continue;
    }
    if (char === 0x22) inString = true;
    else if (char === 0x2c) {
      values++;
      const last = members.length - 1;
      if (last >= 0 && ++members[last]! > bounds.members)
        return `more than ${bounds.members} members in one object or array`;
    } else if (char === 0x5b || char === 0x7b) {
      values++;
      if (members.push(1) > bounds.depth) return `JSON nested deeper than ${bounds.depth} levels`;
    } else if (char === 0x5d || char === 0x7d) members.pop();
    if (values > bounds.values) return `more than ${bounds.values} values in one answer`;
  }
  return undefined;
}
