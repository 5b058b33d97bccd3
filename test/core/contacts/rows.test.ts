import { describe, expect, it } from 'vitest';
import { mostUseful, sourceText, type ContactRow } from '../../../src/core/contacts/rows.js';

function row(
  name: string,
  seniority: string | null,
  freshness: ContactRow['email_freshness'],
  lastSeen: string | null,
): ContactRow {
  return {
    domain: 'acme.com',
    full_name: name,
    seniority,
    business_email: freshness === 'none' ? null : `${name}@acme.com`,
    business_email_last_seen: lastSeen,
    email_freshness: freshness,
    email_age_days: null,
    verification: null,
    verified_at: null,
    source: null,
  } as unknown as ContactRow;
}

const names = (rows: ContactRow[]) => rows.map((r) => r.full_name);

describe('mostUseful (--per-company)', () => {
  it('keeps the most senior first, whatever the service order', () => {
    const rows = [
      row('cpo1', 'vp', 'fresh', '2025-06-01'),
      row('cpo2', 'vp', 'fresh', '2025-06-01'),
      row('ceo', 'cxo', 'stale', '2020-01-01'),
    ];
    expect(names(mostUseful(rows, 2))).toEqual(['ceo', 'cpo1']);
  });

  it('within a seniority, a fresh address before a stale one, then the most recently confirmed, an undated address, no address', () => {
    const rows = [
      row('none', 'cxo', 'none', null),
      row('old', 'cxo', 'stale', '2021-01-01'),
      row('unknown', 'cxo', 'unknown', null),
      row('newer', 'cxo', 'stale', '2023-05-01'),
      row('fresh', 'cxo', 'fresh', '2025-06-01'),
    ];
    expect(names(mostUseful(rows, 5))).toEqual(['fresh', 'newer', 'old', 'unknown', 'none']);
    expect(names(mostUseful(rows, 2))).toEqual(['fresh', 'newer']);
  });

  it('keeps the service order among equals, and ranks an unknown seniority last', () => {
    const rows = [
      row('a', 'staff', 'fresh', '2025-06-01'),
      row('b', 'staff', 'fresh', '2025-06-01'),
      row('x', 'intern', 'fresh', '2025-06-02'),
      row('c', 'staff', 'fresh', '2025-06-01'),
    ];
    expect(names(mostUseful(rows, 4))).toEqual(['a', 'b', 'c', 'x']);
  });
});

describe('sourceText (the source column)', () => {
  it("says each answer's own source, however many rows ask for it", () => {
    const licensed = { dataset: 'Licensed contact records', method: 'licensed', publisher: 'Acme Data' };
    const scraped = { dataset: 'Public pages', method: 'scraped' };
    for (let pass = 0; pass < 2; pass++) {
      expect(sourceText(licensed)).toBe('Licensed contact records (licensed, Acme Data)');
      expect(sourceText(scraped)).toBe('Public pages (scraped)');
      expect(sourceText({})).toBe('contact data');
      expect(sourceText(null)).toBe('');
    }
  });
});
