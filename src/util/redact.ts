/**
 * Every way prospect hides a secret, in one place: the API key shown as its last four characters,
 * removed from any text the outside world sent (in any letter case, percent-encoded or JSON-escaped),
 * and every password a setting can carry (a proxy's, a database's) shown as `***`.
 */

/**
 * How a secret is shown: its last four characters, enough to tell two keys apart and far too few
 * to use. A short secret shows nothing at all, since four characters would be much of it.
 */
export function redactSecret(secret: string): string {
  return secret.length >= 12 ? `…${secret.slice(-4)}` : '…';
}

const REDACTED = '[redacted]';

/**
 * Replaces every occurrence of the secret in a string, in every form text from outside may carry it:
 * any letter case (a service or a proxy may upper-case it), and each character as written,
 * percent-encoded (a URL, hex in any case) or JSON-escaped (`\u0073`, `\/`), in any mix. Keys shorter
 * than 4 characters are not redacted: replacing every "a" in a message would destroy it, and such a
 * key is no secret anyway.
 */
export function redact(text: string, secret: string | undefined): string {
  const pattern = secretPattern(secret);
  return pattern ? text.replace(pattern, REDACTED) : text;
}

/** The last pattern built: a run has one key, and building one costs more than most texts it redacts. */
let built: { secret: string; pattern: RegExp } | undefined;

function secretPattern(secret: string | undefined): RegExp | undefined {
  if (!secret || secret.length < 4) return undefined;
  if (built?.secret !== secret) {
    const characters = Array.from(secret, (char) => `(?:${characterForms(char).join('|')})`);
    built = { secret, pattern: new RegExp(characters.join(''), 'gi') };
  }
  return built.pattern;
}

/**
 * One character of a secret as it may be written: itself, its UTF-8 bytes percent-encoded, JSON's
 * \u escape of it, or after a backslash (JSON's `\/`, `\"` and `\\`).
 */
function characterForms(char: string): string[] {
  const percent = [...Buffer.from(char)].map((byte) => `%${hex(byte, 2)}`).join('');
  const unicode = Array.from({ length: char.length }, (_, index) => `\\\\u${hex(char.charCodeAt(index), 4)}`).join('');
  return [escapeRegExp(char), percent, unicode, `\\\\${escapeRegExp(char)}`];
}

function hex(value: number, digits: number): string {
  return value.toString(16).padStart(digits, '0');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** `redact` applied to every string inside a JSON-like value (keys included). */
export function redactDeep(value: unknown, secret: string | undefined): unknown {
  if (typeof value === 'string') return redact(value, secret);
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, secret));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [redact(key, secret), redactDeep(item, secret)]),
    );
  }
  return value;
}

/** libpq's parameters that hold a secret (passfile and sslkey name files, which are not). */
const PASSWORD_PARAMETERS = new Set(['password', 'sslpassword']);

/**
 * A setting or a message as shown: every password in it becomes `***`, in every form prospect or
 * libpq accepts: a URL's userinfo with or without a user (`postgres://:pw@h`), with or without a
 * scheme (`alice:secret@host:3128`), `@` in the user or the password; a `?password=` or
 * `&sslpassword=` query parameter (its name percent-encoded too); a conninfo `password=secret` or
 * `password = 'a b'`. Read as text, never parsed, so a value no parser accepts still hides its
 * password. The user name stays: it tells accounts apart.
 */
export function withoutPassword(text: string): string {
  // A setting (one token, or a URL with a space in its password) is one URL; a message may hold several.
  const whole = /^\s*[a-z][a-z0-9+.-]*:\/\//i.test(text) || !/\s/.test(text.trim());
  const shown = whole
    ? urlWithoutPassword(text)
    : text.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s'"<>]+/gi, urlWithoutPassword);
  return conninfoWithoutPassword(shown);
}

/** One URL (its scheme optional): the userinfo's password and the query's password parameters hidden. */
function urlWithoutPassword(url: string): string {
  const query = url.replace(/([?&;])([^=&#?;]*)=([^&#]*)/g, (whole, separator: string, name: string) =>
    PASSWORD_PARAMETERS.has(decodedName(name)) ? `${separator}${name}=***` : whole,
  );
  const scheme = /^\s*[a-z][a-z0-9+.-]*:\/\//i.exec(query)?.[0] ?? '';
  const rest = query.slice(scheme.length);
  // The host follows the LAST `@`: a password may hold one unencoded.
  const at = rest.lastIndexOf('@');
  const colon = rest.slice(0, Math.max(at, 0)).indexOf(':');
  if (colon < 0) return query;
  return `${scheme}${rest.slice(0, colon)}:***${rest.slice(at)}`;
}

/** A query parameter's name as the state URL's parser (URLSearchParams) reads it: `+` a space, `%77` a `w`. */
function decodedName(name: string): string {
  return (new URLSearchParams(`${name}=`).keys().next().value ?? '').trim().toLowerCase();
}

/** libpq's conninfo: `password=secret`, spaces around `=`, a value in single quotes with `\'` inside. */
function conninfoWithoutPassword(text: string): string {
  return text.replace(
    /(^|[\s,;(])((?:ssl|pg)?password)(\s*=\s*)('(?:\\.|[^'\\])*'?|"(?:\\.|[^"\\])*"?|(?:\\.|[^\s\\])*)/gi,
    (_whole, before: string, name: string, equals: string) => `${before}${name}${equals}***`,
  );
}
