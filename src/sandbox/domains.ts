/** Syntax of domains and e-mail addresses as the sandbox accepts them (contract rows 21, 22). */

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const DOMAIN = new RegExp(`^(?:${LABEL}\\.)+[a-z]{2,63}$`);
const LOCAL_PART = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

/** A lower-case host name of at least two labels, e.g. "acme.co.uk". */
export function isDomain(text: string): boolean {
  return text.length <= 253 && DOMAIN.test(text);
}

/** A plain addr-spec: dot-atom local part, '@', a domain. Quoted local parts and IP literals are refused. */
export function isEmailAddress(text: string): boolean {
  if (text.length > 254) return false;
  const at = text.lastIndexOf('@');
  if (at <= 0 || at > 64) return false;
  return LOCAL_PART.test(text.slice(0, at).toLowerCase()) && isDomain(text.slice(at + 1).toLowerCase());
}
