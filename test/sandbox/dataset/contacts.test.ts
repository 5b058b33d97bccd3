/**
 * Contacts: the coverage facts of spec §1.6 measured on the default dataset, the contact-count
 * distribution, and the records themselves (fields, unique addresses, dates relative to the snapshot).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { SENIORITIES, type Contact, type Dataset } from '../../../src/sandbox/dataset/index.js';
import { loadNamePools } from '../../../src/sandbox/dataset/names.js';
import { TEST_AS_OF, testDataset } from '../../helpers/sandbox.js';
import { expectedEmailClass } from '../../helpers/email-class.js';

/** The domains of the person's own mailboxes the dataset hands out now and then (webmail, disposable). */
const OWN_MAILBOX_DOMAINS = [
  'gmail.com',
  'yahoo.com',
  'outlook.com',
  'hotmail.com',
  'mailinator.com',
  'guerrillamail.com',
  'yopmail.com',
];

let ds: Dataset;
beforeAll(() => {
  ds = testDataset();
});

function coverage(select: (i: number) => boolean): number {
  let n = 0;
  let covered = 0;
  for (let i = 0; i < ds.size; i++) {
    if (!select(i)) continue;
    n++;
    if ((ds.contactCounts[i] as number) > 0) covered++;
  }
  return (100 * covered) / n;
}

const country = (name: string) => (i: number) => ds.countryOf(i).name === name;
const midMarket = (i: number) => ['11-50', '51-200', '201-500'].includes(ds.employeeRange(i).label);

describe('coverage of named contacts (spec §1.6), within 2 points', () => {
  it.each([
    ['every company', () => true, 9.0],
    ['united states', country('united states'), 67.9],
    ['united kingdom', country('united kingdom'), 16.4],
    ['germany', country('germany'), 9.9],
    ['US mid-market (11-500)', (i: number) => country('united states')(i) && midMarket(i), 77.7],
    ['mid-market, any country', midMarket, 28.0],
  ] as Array<[string, (i: number) => boolean, number]>)('%s', (_, select, expected) => {
    const measured = coverage(select);
    console.log(`coverage ${_}: ${measured.toFixed(1)}% (stated ${expected}%)`);
    expect(Math.abs(measured - expected)).toBeLessThanOrEqual(2);
  });
});

describe('contacts per company', () => {
  it('averages about 117 where present, skewed, with a tail for large companies', () => {
    const counts = [...ds.contactCounts].filter((n) => n > 0).sort((a, b) => a - b);
    const mean = counts.reduce((a, b) => a + b, 0) / counts.length;
    console.log(
      `contacts where present: mean ${mean.toFixed(1)}, median ${counts[counts.length >> 1]}, max ${counts.at(-1)}`,
    );
    expect(mean).toBeGreaterThanOrEqual(100);
    expect(mean).toBeLessThanOrEqual(135);
    expect(counts[0]).toBe(1);
    expect(counts[counts.length >> 1]).toBeLessThan(mean); // skewed: median below the mean
    expect(counts.filter((n) => n > 200).length).toBeGreaterThan(0);
    const over1000 = counts.filter((n) => n > 1000);
    expect(over1000.length).toBeGreaterThan(0);
    expect(over1000.length / counts.length).toBeLessThan(0.05);
    for (let i = 0; i < ds.size; i++) {
      if ((ds.contactCounts[i] as number) > 1000) expect(ds.employeeRange(i).low).toBeGreaterThanOrEqual(1001);
      if (ds.employee[i] === 0) expect(ds.contactCounts[i]).toBeLessThanOrEqual(10);
    }
  });
});

describe('contact records', () => {
  const sample = (): number[] => {
    const picked: number[] = [];
    for (let i = 0; i < ds.size && picked.length < 40; i += 37) if ((ds.contactCounts[i] as number) > 0) picked.push(i);
    return picked;
  };

  it('has every field, realistic values and unique addresses within a domain', () => {
    const windowStart = Date.parse(`${TEST_AS_OF}T00:00:00Z`) - 3 * 366 * 86_400_000;
    let total = 0;
    let withoutEmail = 0;
    for (const i of sample()) {
      const contacts = ds.contactsOf(i, TEST_AS_OF);
      expect(contacts).toHaveLength(ds.contactCounts[i] as number);
      const emails = contacts.map((c) => c.business_email).filter((e): e is string => e !== null);
      expect(new Set(emails).size).toBe(emails.length);
      expect(new Set(contacts.map((c) => c.full_name)).size).toBe(contacts.length);
      for (const c of contacts) {
        expect(Object.keys(c).sort()).toEqual(
          [
            'business_email',
            'business_email_last_seen',
            'department',
            'domain',
            'first_name',
            'full_name',
            'last_name',
            'linkedin_url',
            'seniority',
            'title',
          ].sort(),
        );
        expect(c.domain).toBe(ds.domains[i]);
        expect(c.full_name).toBe(`${c.first_name} ${c.last_name}`);
        expect(SENIORITIES).toContain(c.seniority);
        expect(c.title.length).toBeGreaterThan(2);
        if (c.business_email === null) {
          withoutEmail++;
          expect(c.business_email_last_seen).toBeNull();
        } else {
          // At the company's domain, or now and then a person's own webmail or disposable mailbox (issue 46).
          const domains = [ds.domains[i] as string, ...OWN_MAILBOX_DOMAINS].map((d) => d.replace(/\./g, '\\.'));
          expect(c.business_email).toMatch(new RegExp(`^[a-z0-9._]+@(${domains.join('|')})$`));
          const seen = Date.parse(`${c.business_email_last_seen}T00:00:00Z`);
          expect(seen).toBeGreaterThanOrEqual(windowStart);
          expect(seen).toBeLessThanOrEqual(Date.parse(`${TEST_AS_OF}T00:00:00Z`));
        }
        if (c.linkedin_url !== null) expect(c.linkedin_url).toMatch(/^https:\/\/www\.linkedin\.com\/in\/[a-z0-9-]+$/);
      }
      total += contacts.length;
    }
    expect(withoutEmail / total).toBeGreaterThan(0.1);
    expect(withoutEmail / total).toBeLessThan(0.2);
  });

  it('holds a few role, webmail and disposable addresses, each class a small share', () => {
    const classes: Record<string, number> = { personal: 0, role: 0, webmail: 0, disposable: 0 };
    let addresses = 0;
    for (let i = 0; i < 400; i++) {
      for (const c of ds.contactsOf(i, TEST_AS_OF)) {
        if (c.business_email === null) continue;
        addresses += 1;
        classes[expectedEmailClass(c.business_email, c.domain)]! += 1;
      }
    }
    for (const kind of ['role', 'webmail', 'disposable']) {
      expect(classes[kind], kind).toBeGreaterThan(0);
      expect(classes[kind]! / addresses, kind).toBeLessThan(0.05);
    }
  });

  it('matches titles to seniority', () => {
    const contacts: Contact[] = sample().flatMap((i) => ds.contactsOf(i, TEST_AS_OF));
    for (const c of contacts.filter((c) => c.seniority === 'vp'))
      expect(c.title).toMatch(/V(ice )?P|Vice President|Counsel/);
    for (const c of contacts.filter((c) => c.seniority === 'manager')) expect(c.title).toMatch(/Manager|Lead|Owner/);
  });

  it('is deterministic from (seed, domain, snapshot day); the day only moves the dates', () => {
    const i = sample()[3] as number;
    expect(ds.contactsOf(i, TEST_AS_OF)).toEqual(ds.contactsOf(i, TEST_AS_OF));
    const later = ds.contactsOf(i, '2025-07-30');
    const now = ds.contactsOf(i, TEST_AS_OF);
    expect(later.map((c) => c.business_email)).toEqual(now.map((c) => c.business_email));
    const shifted = later.find((c) => c.business_email_last_seen !== null);
    const original = now.find((c) => c.business_email === shifted?.business_email);
    expect(
      Date.parse(shifted?.business_email_last_seen ?? '') - Date.parse(original?.business_email_last_seen ?? ''),
    ).toBe(30 * 86_400_000);
  });

  it('uses name pools whose ASCII forms are unique (addresses stay unambiguous)', () => {
    const pools = loadNamePools();
    for (const name of pools.names) {
      const pool = pools.poolOf(name);
      expect(new Set(pool.firstAscii).size).toBe(pool.first.length);
      expect(new Set(pool.lastAscii).size).toBe(pool.last.length);
    }
  });
});
