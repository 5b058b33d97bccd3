import type { z } from 'zod';
import { isSeniority, SENIORITIES, type Seniority } from '../../api/index.js';
import { UsageError } from '../../exit-codes.js';
import { parseMaxAge } from '../../io/max-age.js';
import type { CONTACT_FLAGS } from '../../options/command-flags.js';
import type { flagShape } from '../shared/flags.js';
import { parsePersonFilter, type PersonFilter } from './row-filters.js';
import { parseKeptClasses, type EmailClass } from '../shared/email-class.js';

export const STALE_POLICIES = ['keep', 'drop', 'verify'] as const;
type StalePolicy = (typeof STALE_POLICIES)[number];

/** What `contacts` and `pipeline` share: how to ask, and what to do with old addresses (CONTACT_FLAGS). */
export type ContactFlags = z.output<z.ZodObject<ReturnType<typeof flagShape<typeof CONTACT_FLAGS>>>>;

export interface ContactSettings {
  seniority?: Seniority[];
  limit: number;
  perCompany?: number;
  cutoff: Date;
  maxAgeText: string;
  stale: StalePolicy;
  verifyBudget?: number;
  concurrency: number;
  /** --department, --title: applied to each domain's contacts before anything else. */
  person?: PersonFilter;
  /** --deliverable-only: only rows a rep can send to are written. */
  deliverableOnly: boolean;
  /** --keep: the email classes --deliverable-only keeps after all. */
  keepClasses: EmailClass[];
}

/** Every check that can fail on the user's input, done before any request. */
export function parseContactFlags(flags: ContactFlags, now: Date): ContactSettings {
  const maxAge = parseMaxAge(flags.maxAge, now);
  if (!maxAge.ok) throw new UsageError(`--max-age "${flags.maxAge}": ${maxAge.reason}.`);
  if (!(STALE_POLICIES as readonly string[]).includes(flags.stale)) {
    throw new UsageError(`unknown --stale "${flags.stale}".`, `Use one of: ${STALE_POLICIES.join(', ')}.`);
  }
  if (flags.verifyBudget !== undefined && flags.stale !== 'verify') {
    throw new UsageError('--verify-budget only applies with --stale verify.');
  }
  if (flags.yes && flags.stale !== 'verify') {
    throw new UsageError('--yes only applies with --stale verify: nothing else spends paid units.');
  }
  return {
    seniority: flags.seniority === undefined ? undefined : parseSeniority(flags.seniority),
    limit: flags.limit,
    perCompany: flags.perCompany,
    cutoff: maxAge.cutoff,
    maxAgeText: flags.maxAge,
    stale: flags.stale as StalePolicy,
    verifyBudget: flags.verifyBudget,
    concurrency: flags.concurrency,
    person: parsePersonFilter(flags),
    deliverableOnly: flags.deliverableOnly,
    keepClasses: parseKeptClasses(flags.keep, flags.deliverableOnly),
  };
}

/** How a run asks for contacts and treats old addresses, as its record and fingerprint name them. */
export function contactParameters(settings: ContactSettings) {
  return {
    seniority: settings.seniority ?? null,
    limit: settings.limit,
    per_company: settings.perCompany ?? null,
    max_age: settings.maxAgeText,
    stale: settings.stale,
    // Only when given: a run without them keeps the record (and a pipeline's fingerprint) it had.
    ...(settings.person?.departments ? { department: settings.person.departments } : {}),
    ...(settings.person?.titles ? { title: settings.person.titles } : {}),
    ...(settings.deliverableOnly ? { deliverable_only: true } : {}),
    ...(settings.keepClasses.length > 0 ? { keep: settings.keepClasses } : {}),
  };
}

function parseSeniority(text: string): Seniority[] {
  const values = text
    .split(',')
    .map((value) => value.trim().toLowerCase())
    .filter(Boolean);
  const unknown = values.filter((value) => !isSeniority(value));
  if (values.length === 0 || unknown.length > 0) {
    const what =
      values.length === 0
        ? 'an empty --seniority'
        : `unknown seniority ${unknown.map((value) => `"${value}"`).join(', ')}`;
    throw new UsageError(
      `${what}.`,
      `Seniorities are: ${SENIORITIES.join(', ')} (comma-separated, e.g. --seniority cxo,vp).`,
    );
  }
  return [...new Set(values)] as Seniority[];
}
