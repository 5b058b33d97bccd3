/**
 * Every way prospect hides a secret, in one place: the API key shown as its last four characters,
 * removed from any text the outside world sent (in any letter case), and the password of a URL (a
 * proxy, a database) shown as `***`.
 */

/**
 * How a secret is shown: its last four characters, enough to tell two keys apart and far too few
 * to use. A short secret shows nothing at all, since four characters would be much of it.
 */
export function redactSecret(secret: string): string {
  return secret.length >= 12 ? `…${secret.slice(-4)}` : '…';
}

/**
 * Replaces every occurrence of the secret in a string, whatever its letter case (a service or a proxy
 * may echo it upper-cased), percent-encoded too (a URL). Keys shorter than 4 characters are not
 * redacted: replacing every "a" in a message would destroy it, and such a key is no secret anyway.
 */
export function redact(text: string, secret: string | undefined): string {
  if (!secret || secret.length < 4) return text;
  // As written and as a URL carries it (percent-encoded), in any letter case.
  const forms = [...new Set([secret, encodeURIComponent(secret)])].map((form) =>
    form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
  );
  return text.replace(new RegExp(forms.join('|'), 'gi'), '[redacted]');
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

/**
 * A URL as shown: its password becomes `***`, in every form a setting accepts: with or without a
 * scheme (`alice:secret@host:3128`), `@` in the user or the password (the host follows the LAST `@`),
 * percent-encoded or not, any scheme (`http://`, `postgres://`). Read as text, never parsed, so a URL
 * no parser accepts still hides its password. The user name stays: it tells accounts apart.
 */
export function withoutPassword(text: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(text)?.[0] ?? '';
  const rest = text.slice(scheme.length);
  const at = rest.lastIndexOf('@');
  if (at < 0) return text;
  const userinfo = rest.slice(0, at);
  const colon = userinfo.indexOf(':');
  if (colon < 0) return text;
  return `${scheme}${userinfo.slice(0, colon)}:***${rest.slice(at)}`;
}
