/**
 * How a secret is shown: its last four characters, enough to tell two keys apart and far too few
 * to use. A short secret shows nothing at all, since four characters would be much of it.
 */
export function redactSecret(secret: string): string {
  return secret.length >= 12 ? `…${secret.slice(-4)}` : '…';
}

/** A URL as shown: a password in it becomes `***` (a proxy URL may carry one). */
export function withoutPassword(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:]*):[^/@]*@/i, '$1:***@');
}
