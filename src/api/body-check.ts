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

function looksLikeHtml(headers: IncomingHttpHeaders, bodyText: string): boolean {
  const contentType = String(headers['content-type'] ?? '').toLowerCase();
  return contentType.includes('html') || /^\s*</.test(bodyText);
}
