/**
 * --deliverable-only's rule and its counts (src/core/contacts/row-filters.ts), in process: which rows a
 * rep can send to, for every verdict and every freshness (an address of unknown age is not fresh), and
 * the "(N in all)" total, which counts every kind, `no_email` included. The expected kinds are the
 * rule as docs/ and the README state it, written here apart from src.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  keepDeliverable,
  reportRowFilters,
  totalUndeliverable,
  undeliverableKind,
  type UndeliverableCounts,
} from '../../../src/core/contacts/row-filters.js';
import type { ContactRow } from '../../../src/core/shared/contact-row.js';
import type { EmailClass } from '../../../src/core/shared/email-class.js';
import { Reporter } from '../../../src/ui/reporter.js';

const FRESHNESS = ['fresh', 'stale', 'unknown', 'none'] as const;
const VERDICTS = [null, 'valid', 'invalid', 'risky', 'unknown', 'unchecked'] as const;
const KINDS = ['no_email', 'role', 'disposable', 'invalid', 'risky', 'unknown', 'stale_unverified'] as const;
const CLASSES = ['personal', 'webmail', 'role', 'disposable'] as const;
type Class = (typeof CLASSES)[number];

function row(
  email: string | null,
  freshness: (typeof FRESHNESS)[number],
  verification: string | null,
  emailClass: Class = 'personal',
): ContactRow {
  return {
    business_email: email,
    email_freshness: freshness,
    verification,
    email_class: email ? emailClass : '',
  } as unknown as ContactRow;
}

/**
 * The documented rule: no role or disposable address unless --keep names its class; then valid, or
 * fresh and not verified; else why not.
 */
function expected(
  email: string | null,
  freshness: string,
  verification: string | null,
  emailClass: Class = 'personal',
  keep: readonly string[] = [],
): string | null {
  if (email === null || email === '') return 'no_email';
  if ((emailClass === 'role' || emailClass === 'disposable') && !keep.includes(emailClass)) return emailClass;
  if (verification === 'valid') return null;
  if (verification === 'invalid' || verification === 'risky' || verification === 'unknown') return verification;
  return freshness === 'fresh' ? null : 'stale_unverified';
}

const zero = (): UndeliverableCounts => ({
  no_email: 0,
  role: 0,
  disposable: 0,
  invalid: 0,
  risky: 0,
  unknown: 0,
  stale_unverified: 0,
});

describe('--deliverable-only: which rows a rep can send to', () => {
  const cases = [null, '', 'a@b.com'].flatMap((email) =>
    FRESHNESS.flatMap((freshness) => VERDICTS.map((verification) => ({ email, freshness, verification }))),
  );
  it.for(cases)('$email, $freshness, verified $verification', ({ email, freshness, verification }) => {
    expect(undeliverableKind(row(email, freshness, verification), [])).toBe(expected(email, freshness, verification));
  });

  const classCases = CLASSES.flatMap((emailClass) =>
    [[], ['role'], ['disposable'], ['role', 'disposable']].flatMap((keep) =>
      VERDICTS.map((verification) => ({ emailClass, keep, verification })),
    ),
  );
  it.for(classCases)('a $emailClass address, --keep $keep, verified $verification', (each) => {
    const { emailClass, keep, verification } = each;
    const kept = keep as EmailClass[];
    expect(undeliverableKind(row('a@b.com', 'fresh', verification, emailClass), kept)).toBe(
      expected('a@b.com', 'fresh', verification, emailClass, keep),
    );
  });

  it('an address of unknown age, never verified, is left out as stale_unverified, never kept', () => {
    expect(undeliverableKind(row('a@b.com', 'unknown', null), [])).toBe('stale_unverified');
    expect(undeliverableKind(row('a@b.com', 'unknown', 'unchecked'), [])).toBe('stale_unverified');
    expect(undeliverableKind(row('a@b.com', 'fresh', null), [])).toBeNull();
  });

  it('keepDeliverable keeps the sendable rows in order and counts each other row once, by kind', () => {
    const rows = cases.map(({ email, freshness, verification }) => row(email, freshness, verification));
    const counts = zero();
    const kept = keepDeliverable(rows, counts, []);
    expect(kept).toEqual(
      rows.filter(
        (each, index) => expected(cases[index]!.email, cases[index]!.freshness, cases[index]!.verification) === null,
      ),
    );
    const byKind = zero();
    for (const { email, freshness, verification } of cases) {
      const kind = expected(email, freshness, verification);
      if (kind !== null) byKind[kind as keyof UndeliverableCounts] += 1;
    }
    expect(counts).toEqual(byKind);
    expect(kept.length + Object.values(counts).reduce((a, b) => a + b, 0)).toBe(rows.length);
  });
});

describe('the "(N in all)" total', () => {
  it.for(KINDS)('counts %s', (kind) => {
    const counts = { ...zero(), [kind]: 7 };
    expect(totalUndeliverable(counts)).toBe(7);
  });

  it('is the sum of every kind, and the summary line says each and the total', () => {
    const counts: UndeliverableCounts = {
      no_email: 6,
      role: 5,
      disposable: 8,
      invalid: 4,
      risky: 1,
      unknown: 2,
      stale_unverified: 3,
    };
    expect(totalUndeliverable(counts)).toBe(29);
    const stderr = new PassThrough();
    let text = '';
    stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const reporter = new Reporter({ stderr, stderrIsTTY: false, verbose: true, quiet: false, debug: false });
    const classes = { personal: 10, role: 0, webmail: 2, disposable: 0 };
    reportRowFilters(
      reporter,
      { deliverableOnly: true },
      { filteredOut: 0, undeliverable: counts, email_class: classes },
    );
    expect(text).toBe(
      'Addresses written: personal 10, role 0, webmail 2, disposable 0.\n' +
        'Left out by --deliverable-only: no email 6, role 5, disposable 8, invalid 4, risky 1, unknown 2, ' +
        'stale unverified 3 (29 in all).\n',
    );
  });
});
