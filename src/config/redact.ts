/**
 * How a secret is shown: its last four characters, enough to tell two keys apart and far too few
 * to use. A short secret shows nothing at all, since four characters would be much of it.
 */
export function redactSecret(secret: string): string {
  return secret.length >= 12 ? `…${secret.slice(-4)}` : '…';
}
