/**
 * Strict query-string parsing. URLSearchParams silently keeps malformed percent-escapes; the sandbox
 * rejects them (400) so a client bug in encoding shows up in tests instead of as a silent mismatch.
 */
import { ApiError, invalidParameter } from './errors.js';

export type RawQuery = ReadonlyMap<string, readonly string[]>;

/** name → values in order of appearance; '+' is a space, as in form encoding. */
export function parseQuery(search: string): RawQuery {
  const query = new Map<string, string[]>();
  const text = search.startsWith('?') ? search.slice(1) : search;
  if (text === '') return query;
  for (const part of text.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decode(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? '' : decode(part.slice(eq + 1));
    const values = query.get(name);
    if (values) values.push(value);
    else query.set(name, [value]);
  }
  return query;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw new ApiError(400, 'invalid_parameter', 'The query string has a malformed percent-encoding.');
  }
}

/**
 * The values of an endpoint's parameters, each allowed once (contract row 3). A parameter the endpoint
 * does not know is rejected rather than ignored: a misspelt filter would otherwise widen the result.
 */
export function singleValues<K extends string>(
  query: RawQuery,
  known: readonly K[],
  repeatable: readonly K[] = [],
): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const [name, values] of query) {
    if (!(known as readonly string[]).includes(name)) {
      throw invalidParameter(name, `Unknown parameter '${truncate(name)}'. Known parameters: ${known.join(', ')}.`, {
        valid_values: known,
      });
    }
    if (values.length > 1 && !(repeatable as readonly string[]).includes(name))
      throw invalidParameter(name, `The parameter '${name}' may appear only once.`);
    out[name as K] = values[0] as string;
  }
  return out;
}

/** An optional integer parameter within bounds (digits only: "+5", "5.0" and " 5" are not integers). */
export function integerParameter(
  name: string,
  value: string | undefined,
  min: number,
  max: number,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  if (!/^[0-9]{1,7}$/.test(value)) throw invalidParameter(name, `'${name}' must be an integer from ${min} to ${max}.`);
  const n = Number(value);
  if (n < min || n > max) throw invalidParameter(name, `'${name}' must be an integer from ${min} to ${max}.`);
  return n;
}

/** For echoing user input in a reason without making the error body huge. */
export function truncate(text: string, max = 80): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
