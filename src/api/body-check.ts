/**
 * A complete 2xx answer read into a checked value, or the problem with it in one line (HTML from a
 * proxy, truncated JSON, a shape the contract does not describe).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { SchemaCheck } from './schemas.js';

/** `cut`: the body is empty or JSON that does not parse (not HTML): most likely an answer that ended early. */
export type BodyCheck<T> = { ok: true; value: T } | { ok: false; problem: string; hint?: string; cut?: boolean };

export async function checkJsonBody<T>(
  check: (json: unknown) => SchemaCheck<T>,
  status: number,
  headers: IncomingHttpHeaders,
  bodyText: string,
  onBody?: (json: unknown) => void,
): Promise<BodyCheck<T>> {
  if (bodyText.trim() === '') return { ok: false, problem: `an empty body (status ${status})`, cut: true };
  const depth = nestingDepth(bodyText);
  if (depth > MAX_JSON_DEPTH)
    return { ok: false, problem: `JSON nested deeper than ${MAX_JSON_DEPTH} levels (status ${status})` };
  let json: unknown;
  try {
    json = JSON.parse(bodyText);
  } catch (error) {
    if (looksLikeHtml(headers, bodyText)) {
      return {
        ok: false,
        problem: `HTML, not JSON (status ${status})`,
        hint: 'A proxy or a web page answered instead of the service; check the base URL.',
      };
    }
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

/**
 * The service's pages are 5 levels deep; an answer nested thousands deep (in a field nobody reads)
 * would overflow the stack of whatever walks it later (JSON output), so it is refused here.
 */
export const MAX_JSON_DEPTH = 64;

/** The deepest nesting of `[` and `{` in a JSON text, strings skipped; stops counting past the cap. */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c) i++;
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x5b || char === 0x7b) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > MAX_JSON_DEPTH) return deepest;
    } else if (char === 0x5d || char === 0x7d) depth--;
  }
  return deepest;
}

function looksLikeHtml(headers: IncomingHttpHeaders, bodyText: string): boolean {
  const contentType = String(headers['content-type'] ?? '').toLowerCase();
  return contentType.includes('html') || /^\s*</.test(bodyText);
}
