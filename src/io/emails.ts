import { normalizeHostname } from './domains.js';

/**
 * Local syntax check of an email address before anything is paid for. A pragmatic subset of
 * RFC 5321: what mail systems really hand out, not every address the RFC allows.
 */
export type EmailResult = { ok: true; email: string } | { ok: false; reason: string };

export const MAX_EMAIL_LENGTH = 254;
const MAX_LOCAL_PART_LENGTH = 64;

// RFC 5322 atext, plus the dot, which gets its own placement rules below.
const LOCAL_PART_CHARACTER = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]$/;

/**
 * Never throws. On success the address is trimmed, its domain lower-cased and in punycode; the
 * local part is kept as written, because a mail server may treat its case as significant.
 */
export function checkEmailSyntax(input: string): EmailResult {
  const email = input.trim();
  if (email === '') return fail('empty');
  if (email.startsWith('"')) return fail('quoted local parts are not supported');
  const at = email.indexOf('@');
  if (at === -1) return fail('no "@"');
  if (email.indexOf('@', at + 1) !== -1) return fail('more than one "@"');
  const local = email.slice(0, at);
  const localProblem = localPartProblem(local);
  if (localProblem !== null) return fail(localProblem);
  const domain = normalizeHostname(email.slice(at + 1));
  if (!domain.ok) return fail(`domain: ${domain.reason}`);
  const normalized = `${local}@${domain.domain}`;
  if (normalized.length > MAX_EMAIL_LENGTH) return fail(`longer than ${MAX_EMAIL_LENGTH} characters`);
  return { ok: true, email: normalized };
}

/**
 * The key under which two spellings of one address count as the same. Lower-casing the local part
 * is not what RFC 5321 promises, but it is what every real mailbox provider does, and verifying
 * `Bob@acme.com` and `bob@acme.com` separately would pay twice for one answer.
 */
export function emailKey(email: string): string {
  return email.trim().toLowerCase();
}

function fail(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

function localPartProblem(local: string): string | null {
  if (local === '') return 'nothing before "@"';
  if (local.length > MAX_LOCAL_PART_LENGTH) return `more than ${MAX_LOCAL_PART_LENGTH} characters before "@"`;
  for (const character of local) {
    if (!LOCAL_PART_CHARACTER.test(character)) return characterReason(character);
  }
  if (local.startsWith('.') || local.endsWith('.')) return 'starts or ends with a dot before "@"';
  if (local.includes('..')) return 'two dots in a row';
  return null;
}

function characterReason(character: string): string {
  if (/\s/u.test(character)) return 'contains whitespace';
  if (character === '"') return 'quoted local parts are not supported';
  if (character > '\x7f') return 'non-ASCII characters before "@" are not supported';
  return `contains ${JSON.stringify(character)}`;
}
