/**
 * The email class of an address, judged here from the maintained lists themselves (not through
 * src/core/shared/email-class.ts): disposable > role > webmail > personal, '' without an address.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const disposable = new Set<string>(require('disposable-email-domains-js/dist/dict/disposable_email_blocklist.json'));
const webmail = new Set<string>(require('email-providers/all.json'));
const roles = new Set<string>((require('role-based-email-addresses') as string[]).map((part) => part.toLowerCase()));

export function expectedEmailClass(email: string | null | undefined, companyDomain?: string): string {
  if (!email) return '';
  const [local = '', domain = ''] = email.toLowerCase().split('@');
  if (disposable.has(domain)) return 'disposable';
  if (roles.has(local.split('+')[0]!)) return 'role';
  if (webmail.has(domain) && domain !== companyDomain?.toLowerCase()) return 'webmail';
  return 'personal';
}
