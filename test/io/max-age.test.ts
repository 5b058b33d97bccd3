import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyFreshness, parseDay, parseMaxAge, type MaxAgeResult } from '../../src/io/max-age.js';

// Mid-afternoon, so that "start of the UTC day" is visibly different from `now`.
const NOW = new Date('2026-05-01T15:30:00Z');

function cutoffOf(text: string, now: Date = NOW): string {
  const result = parseMaxAge(text, now);
  if (!result.ok) throw new Error(`unexpected rejection of ${text}: ${result.reason}`);
  return result.cutoff.toISOString();
}

function reasonOf(text: string): string {
  const result = parseMaxAge(text, NOW);
  if (result.ok) throw new Error(`unexpected acceptance of ${text}`);
  return result.reason;
}

describe('parseMaxAge', () => {
  it.each([
    ['90d', '2026-01-31'],
    ['90', '2026-01-31'],
    ['90 days', '2026-01-31'],
    [' 90 D ', '2026-01-31'],
    ['1 day', '2026-04-30'],
    ['0d', '2026-05-01'],
    ['0', '2026-05-01'],
    ['12w', '2026-02-06'],
    ['2 weeks', '2026-04-17'],
    ['6m', '2025-11-01'],
    ['6mo', '2025-11-01'],
    ['6 months', '2025-11-01'],
    ['1y', '2025-05-01'],
    ['2 years', '2024-05-01'],
    ['2026-01-31', '2026-01-31'],
    ['2026-05-01', '2026-05-01'],
  ])('%j -> cutoff %s', (text, day) => {
    expect(cutoffOf(text)).toBe(`${day}T00:00:00.000Z`);
  });

  it('counts calendar months, clamping to the end of shorter months', () => {
    expect(cutoffOf('1m', new Date('2026-03-31T10:00:00Z'))).toBe('2026-02-28T00:00:00.000Z');
    expect(cutoffOf('1m', new Date('2024-03-31T10:00:00Z'))).toBe('2024-02-29T00:00:00.000Z');
    expect(cutoffOf('1y', new Date('2024-02-29T10:00:00Z'))).toBe('2023-02-28T00:00:00.000Z');
    expect(cutoffOf('13m', new Date('2026-01-15T00:00:00Z'))).toBe('2024-12-15T00:00:00.000Z');
  });

  it('describes the cutoff for summaries', () => {
    const result = parseMaxAge('90d', NOW);
    expect(result).toMatchObject({ ok: true, description: '90 days (last seen on or after 2026-01-31)' });
    expect(parseMaxAge('1y', NOW)).toMatchObject({ description: '1 year (last seen on or after 2025-05-01)' });
    expect(parseMaxAge('2026-01-31', NOW)).toMatchObject({ description: 'last seen on or after 2026-01-31' });
  });

  it.each([
    ['', /^empty; expected/],
    ['soon', /"soon" is not a duration; expected/],
    ['-5d', /is not a duration/],
    ['1.5y', /is not a duration/],
    ['90 fortnights', /unknown unit "fortnights"/],
    ['2026-02-30', /2026-02-30 is not a real date/],
    ['2026-05-02', /2026-05-02 is in the future/],
    ['101y', /more than 100 years/],
    ['99999999999999999999999d', /more than 100 years/],
  ])('%j is rejected', (text, reason) => {
    expect(reasonOf(text)).toMatch(reason);
  });

  it('accepts exactly 100 years in any unit', () => {
    expect(parseMaxAge('100y', NOW).ok).toBe(true);
    expect(parseMaxAge('1200m', NOW).ok).toBe(true);
  });

  it('never throws for any string', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' })), (text) => {
        let result: MaxAgeResult | undefined;
        expect(() => {
          result = parseMaxAge(text, NOW);
        }).not.toThrow();
        if (result?.ok === true) expect(result.cutoff.getTime()).toBeLessThanOrEqual(NOW.getTime());
      }),
      { numRuns: 2000 },
    );
  });

  it('never throws for strings shaped like durations', () => {
    const duration = fc
      .tuple(
        fc.stringMatching(/^\d{1,25}$/),
        fc.constantFrom('', ' ', '  '),
        fc.constantFrom('', 'd', 'w', 'm', 'mo', 'y', 'days', 'weeks', 'months', 'years', 'x'),
      )
      .map(([digits, space, unit]) => `${digits}${space}${unit}`);
    fc.assert(
      fc.property(duration, (text) => void parseMaxAge(text, NOW)),
      { numRuns: 1000 },
    );
  });

  it('is monotonic: a longer age gives an earlier or equal cutoff', () => {
    const amount = fc.integer({ min: 0, max: 36_000 });
    fc.assert(
      fc.property(
        amount,
        amount,
        fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }),
        (a, b, now) => {
          const [shorter, longer] = a <= b ? [a, b] : [b, a];
          expect(cutoffOf(`${longer}d`, now) <= cutoffOf(`${shorter}d`, now)).toBe(true);
        },
      ),
    );
    expect(cutoffOf('90d') < cutoffOf('30d')).toBe(true);
    expect(cutoffOf('6m') < cutoffOf('12w')).toBe(true);
  });

  it('is monotonic across units: weeks, months and years never cross days of the same length', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 99 }),
        fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }),
        (n, now) => {
          expect(cutoffOf(`${n * 7}d`, now)).toBe(cutoffOf(`${n}w`, now));
          expect(cutoffOf(`${n * 28}d`, now) >= cutoffOf(`${n}m`, now)).toBe(true);
          expect(cutoffOf(`${n * 31}d`, now) <= cutoffOf(`${n}m`, now)).toBe(true);
          expect(cutoffOf(`${n}m`, now) >= cutoffOf(`${n}y`, now)).toBe(true);
        },
      ),
    );
  });
});

/** A contact's age in days as the email_age_days column gives it. */
const ageInDays = (lastSeen: string | null, now: Date): number | null =>
  classifyFreshness({ email: 'a@example.com', lastSeen }, new Date(0), now).email_age_days;

describe('email_age_days', () => {
  it.each([
    ['2026-05-01', 0],
    ['2026-04-30', 1],
    ['2026-01-31', 90],
    ['2025-05-01', 365],
    ['2026-01-31T23:59:59Z', 90],
    ['2026-01-31T10:00:00.000+05:00', 90],
    ['2026-01-31 08:00', 90],
    ['2026-06-01', 0],
  ])('%s is %i days old', (lastSeen, days) => {
    expect(ageInDays(lastSeen, NOW)).toBe(days);
  });

  it.each([null, '', 'yesterday', '2026-02-30', '31/01/2026', '2026-1-31', '2026-01-31x'])(
    '%j has no age',
    (lastSeen) => {
      expect(ageInDays(lastSeen, NOW)).toBeNull();
    },
  );

  it('parses days as midnight UTC', () => {
    expect(parseDay('2024-02-29')?.toISOString()).toBe('2024-02-29T00:00:00.000Z');
    expect(parseDay('2023-02-29')).toBeNull();
  });
});

describe('classifyFreshness', () => {
  const cutoff = new Date('2026-01-31T00:00:00Z');

  it.each([
    [
      { email: 'a@acme.com', lastSeen: '2026-01-31' },
      { email_age_days: 90, email_freshness: 'fresh' },
    ],
    [
      { email: 'a@acme.com', lastSeen: '2026-01-30' },
      { email_age_days: 91, email_freshness: 'stale' },
    ],
    [
      { email: 'a@acme.com', lastSeen: '2026-04-30T12:00:00Z' },
      { email_age_days: 1, email_freshness: 'fresh' },
    ],
    [
      { email: 'a@acme.com', lastSeen: '2027-01-01' },
      { email_age_days: 0, email_freshness: 'fresh' },
    ],
    [
      { email: 'a@acme.com', lastSeen: null },
      { email_age_days: null, email_freshness: 'unknown' },
    ],
    [
      { email: 'a@acme.com', lastSeen: 'not a date' },
      { email_age_days: null, email_freshness: 'unknown' },
    ],
    [
      { email: null, lastSeen: '2026-04-30' },
      { email_age_days: null, email_freshness: 'none' },
    ],
    [
      { email: '', lastSeen: null },
      { email_age_days: null, email_freshness: 'none' },
    ],
  ])('%j -> %j', (contact, expected) => {
    expect(classifyFreshness(contact, cutoff, NOW)).toEqual(expected);
  });

  it('with 0d only addresses seen today are fresh', () => {
    const today = parseMaxAge('0d', NOW);
    if (!today.ok) throw new Error(today.reason);
    expect(classifyFreshness({ email: 'a@acme.com', lastSeen: '2026-05-01' }, today.cutoff, NOW).email_freshness).toBe(
      'fresh',
    );
    expect(classifyFreshness({ email: 'a@acme.com', lastSeen: '2026-04-30' }, today.cutoff, NOW).email_freshness).toBe(
      'stale',
    );
  });
});
