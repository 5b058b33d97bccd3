/**
 * The fan-out keeps what a full answer proves only from a service that orders contacts most senior
 * first (spec §4.2), and checks that order on every answer (src/core/contacts/proofs.ts). Against a
 * scripted service that answers in record order, ignoring seniority, every contact still arrives: a
 * full answer is split, as before issue 28, and nothing of it is kept.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Contact } from '../../../src/api/index.js';
import { fetchContactsInOrder, newFanoutStats } from '../../../src/core/contacts/fanout.js';
import { SeniorityOrder } from '../../../src/core/contacts/proofs.js';
import {
  clientOf,
  closeScripted,
  sampleContact,
  serveScript,
  type RecordedRequest,
} from '../../helpers/scripted-server.js';

afterEach(closeScripted);

const SENIORITIES = ['cxo', 'vp', 'director', 'manager', 'staff'] as const;

/** Contacts of a domain in record order, their seniorities dealt round-robin from a rotating start (so never sorted). */
function recordsOf(domain: string, count: number): Array<Record<string, unknown>> {
  return Array.from({ length: count }, (_, index) =>
    sampleContact(domain, {
      full_name: `${domain} #${index}`,
      business_email: `p${index}@${domain}`,
      seniority: SENIORITIES[(index * 3 + domain.length) % SENIORITIES.length],
    }),
  );
}

/** 30 domains: most small, two with more than one call holds (neither over 1,000 at one seniority). */
const DOMAINS = Array.from({ length: 30 }, (_, index) => `d${index}.example`);
const SIZES = new Map(
  DOMAINS.map((domain, index) => [domain, index === 7 ? 1_400 : index === 21 ? 2_600 : 20 + ((index * 37) % 90)]),
);
const RECORDS = new Map(DOMAINS.map((domain) => [domain, recordsOf(domain, SIZES.get(domain)!)]));

/** A contacts service over RECORDS: the asked domains' contacts filtered by seniority, cut at the limit; `sorted` orders them as the spec says. */
function contactsService(sorted: boolean) {
  return (request: RecordedRequest) => {
    const domains = request.query.get('domain')!.split(',');
    const seniority = request.query.get('seniority')?.split(',');
    const limit = Number(request.query.get('limit') ?? 200);
    let rows = domains
      .flatMap((domain) => RECORDS.get(domain) ?? [])
      .filter((row) => seniority === undefined || seniority.includes(row['seniority'] as string));
    if (sorted) rows = SENIORITIES.flatMap((level) => rows.filter((row) => row['seniority'] === level));
    return { body: { data: rows.slice(0, limit), meta: { source: { dataset: 'scripted' } }, next_cursor: null } };
  };
}

async function fetchAll(sorted: boolean) {
  const server = await serveScript(contactsService(sorted));
  const client = clientOf(server, { apiKey: 'secret-key-123', maxRetries: 0 });
  const stats = newFanoutStats();
  const got = new Map<string, Contact[]>();
  for await (const found of fetchContactsInOrder(
    client,
    DOMAINS,
    (domain) => domain,
    { limit: 1000, concurrency: 2 },
    stats,
  )) {
    expect(found.truncated, found.domain).toBe(false);
    got.set(found.domain, found.contacts);
  }
  return { got, stats, requests: server.requests };
}

const names = (rows: ReadonlyArray<{ full_name?: unknown }>) => rows.map((row) => String(row.full_name));

describe('a service that does not order contacts by seniority', () => {
  it('still gets every contact of every domain, in the service order where one answer held the domain', async () => {
    const { got, stats } = await fetchAll(false);
    expect([...got.keys()]).toEqual(DOMAINS);
    for (const domain of DOMAINS) {
      const records = RECORDS.get(domain)!;
      if (records.length < 1000) expect(names(got.get(domain)!), domain).toEqual(names(records));
      // Asked once per seniority, most senior first: every contact once.
      else expect(names(got.get(domain)!).sort(), domain).toEqual(names(records).sort());
    }
    expect(stats.rows).toBeGreaterThan([...SIZES.values()].reduce((sum, size) => sum + size, 0));
  });

  it('the same records from a service that orders them: the same contacts, in seniority order, with every row received kept or asked once more', async () => {
    const ordered = await fetchAll(true);
    for (const domain of DOMAINS) {
      const records = RECORDS.get(domain)!;
      expect(names(ordered.got.get(domain)!), domain).toEqual(
        names(SENIORITIES.flatMap((level) => records.filter((row) => row['seniority'] === level))),
      );
    }
    // What the order proves is kept: fewer rows received than from the service that ignores it.
    const unordered = await fetchAll(false);
    expect(ordered.stats.rows).toBeLessThan(unordered.stats.rows);
    // Later calls for a domain name only the seniorities still missing.
    expect(ordered.requests.some((request) => request.query.get('seniority') !== null)).toBe(true);
    expect(
      unordered.requests
        .filter((request) => request.query.get('domain')!.includes(','))
        .every((request) => request.query.get('seniority') === null),
    ).toBe(true);
  });
});

describe('SeniorityOrder', () => {
  const row = (seniority: string | null) => sampleContact('a.example', { seniority }) as unknown as Contact;
  const asked = [...SENIORITIES];

  it('proves the seniorities above the last row of an ordered answer', () => {
    const order = new SeniorityOrder();
    const rows = [row('cxo'), row('vp'), row('vp'), row('manager')];
    order.check(rows, asked);
    expect(order.provenBy(rows, asked)).toEqual(['cxo', 'vp', 'director']);
    expect(order.provenBy(rows, ['vp', 'manager', 'staff'])).toEqual(['vp']);
  });

  it('trusts nothing after one answer out of order, a contact without a seniority, or one not asked for', () => {
    for (const rows of [[row('vp'), row('cxo')], [row('cxo'), row(null)], [row('staff')]]) {
      const order = new SeniorityOrder();
      order.check(rows, ['cxo', 'vp']);
      expect(order.isTrusted).toBe(false);
      order.check([row('cxo')], asked);
      expect(order.provenBy([row('cxo'), row('vp')], asked)).toBeUndefined();
    }
  });
});
