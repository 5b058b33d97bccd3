/**
 * What an address is, judged for free before any paid check, from maintained lists only: the
 * disposable-email-domains project's blocklist, the email-providers package's free webmail domains and
 * mixmax's role local parts (info@, sales@). Hunter, ZeroBounce and NeverBounce report the same classes.
 *
 * One class an address, by precedence: `disposable` > `role` > `webmail` > `personal`. A disposable
 * mailbox reaches nobody whoever it is named after; a role account is a team's whatever its host; a
 * webmail address is still a person's. '' for a row without an address.
 */
import { disposableEmailBlocklistSet } from 'disposable-email-domains-js';
import webmailDomains from 'email-providers/all.json' with { type: 'json' };
import roleLocalParts from 'role-based-email-addresses';
import { UsageError } from '../../exit-codes.js';

const EMAIL_CLASSES = ['personal', 'role', 'webmail', 'disposable'] as const;
export type EmailClass = (typeof EMAIL_CLASSES)[number];

/** The classes --deliverable-only leaves out unless --keep names them. */
const UNSENDABLE_CLASSES: readonly EmailClass[] = ['role', 'disposable'];

interface Lists {
  disposable: ReadonlySet<string>;
  webmail: ReadonlySet<string>;
  roles: ReadonlySet<string>;
}

let lists: Lists | undefined;

/** Built on the first address (some 18,000 domains): a command without contacts never pays for it. */
function loaded(): Lists {
  lists ??= {
    disposable: disposableEmailBlocklistSet(),
    webmail: new Set(webmailDomains as string[]),
    roles: new Set((roleLocalParts as string[]).map((part) => part.toLowerCase())),
  };
  return lists;
}

/**
 * The class of `email`; `companyDomain`: the domain of the company the contact works for, whose own
 * addresses are never webmail (an employee of a mail provider writes from its domain).
 */
export function emailClass(email: string | null | undefined, companyDomain?: string): EmailClass | '' {
  const address = email?.trim().toLowerCase() ?? '';
  const at = address.lastIndexOf('@');
  if (at <= 0) return '';
  const { disposable, webmail, roles } = loaded();
  const domain = address.slice(at + 1);
  if (withParents(domain).some((name) => disposable.has(name))) return 'disposable';
  // `sales+eu@`: the tag does not make a role account anyone's own.
  const local = address.slice(0, at).split('+')[0]!;
  if (roles.has(local)) return 'role';
  if (domain !== companyDomain?.toLowerCase() && webmail.has(domain)) return 'webmail';
  return 'personal';
}

/** `a.b.example.com` → itself, `b.example.com`, `example.com`: a list names the registered domain. */
function withParents(domain: string): string[] {
  const labels = domain.split('.');
  const names: string[] = [];
  for (let index = 0; index < labels.length - 1; index += 1) names.push(labels.slice(index).join('.'));
  return names;
}

/** `--keep role,disposable`: the classes --deliverable-only keeps after all (exit 2 for another word). */
export function parseKeptClasses(text: string | undefined, deliverableOnly: boolean): EmailClass[] {
  if (text === undefined) return [];
  if (!deliverableOnly) throw new UsageError('--keep only applies with --deliverable-only.');
  const values = text
    .split(',')
    .map((value) => value.trim().toLowerCase())
    .filter(Boolean);
  const unknown = values.filter((value) => !UNSENDABLE_CLASSES.includes(value as EmailClass));
  if (values.length === 0 || unknown.length > 0)
    throw new UsageError(
      `${values.length === 0 ? 'an empty --keep' : `--keep ${unknown.map((value) => `"${value}"`).join(', ')}`}: ` +
        'not a class --deliverable-only leaves out.',
      `Give ${UNSENDABLE_CLASSES.join(' or ')} (comma-separated); personal and webmail addresses are always kept.`,
    );
  return [...new Set(values)] as EmailClass[];
}

/** Whether --deliverable-only leaves the class out (role and disposable, less those --keep names). */
export function unsendableClass(emailClass: EmailClass | '', kept: readonly EmailClass[]): boolean {
  return emailClass !== '' && UNSENDABLE_CLASSES.includes(emailClass) && !kept.includes(emailClass);
}

/** A count of each class, for the summary and the run record. */
export type EmailClassCounts = Record<EmailClass, number>;

export function newEmailClassCounts(): EmailClassCounts {
  return { personal: 0, role: 0, webmail: 0, disposable: 0 };
}

/** "personal 120, role 3, webmail 5, disposable 1" */
export function emailClassText(counts: EmailClassCounts, format: (n: number) => string): string {
  return EMAIL_CLASSES.map((name) => `${name} ${format(counts[name])}`).join(', ');
}
