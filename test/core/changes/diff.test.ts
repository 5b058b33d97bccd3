/**
 * rowDigest of a row's JSON, which decides that a row is the previous snapshot's byte for byte (and so
 * is not stored again): the same content the same digest, any difference another, whatever text a service sends.
 */
import { describe, expect, it } from 'vitest';
import type { CompanyRow } from '../../../src/api/index.js';
import { rowDigest as digestOf } from '../../../src/core/changes/diff.js';

const rowDigest = (row: CompanyRow) => digestOf(JSON.stringify(row));

const row = (fields: Record<string, unknown>) => fields as unknown as CompanyRow;
const shopify = { t: 'Shopify', c: 'Ecommerce', v: null };

describe('rowDigest', () => {
  it('the same content gives the same digest, entries shared or copied', () => {
    const shared = row({ domain: 'a.com', crux_rank: 7, technologies: [shopify, shopify] });
    const copied = row({ domain: 'a.com', crux_rank: 7, technologies: [{ ...shopify }, { ...shopify }] });
    expect(rowDigest(shared)).toBe(rowDigest(copied));
  });

  it('any change of a field, an entry or a type gives another digest', () => {
    const base = { domain: 'a.com', company_name: 'A', crux_rank: 7, phone: null, technologies: [shopify] };
    const variants = [
      base,
      { ...base, company_name: 'B' },
      { ...base, crux_rank: 8 },
      { ...base, crux_rank: '7' },
      { ...base, phone: 'null' },
      { ...base, phone: undefined },
      { ...base, extra: { nested: [1] } },
      { ...base, technologies: [{ ...shopify, v: '2.0' }] },
      { ...base, technologies: [{ ...shopify, c: 'CMS' }] },
      { ...base, technologies: [{ ...shopify, x: 1 }] },
      { ...base, technologies: [shopify, shopify] },
      { ...base, technologies: [] },
    ];
    const digests = new Set(variants.map((fields) => rowDigest(row(fields))));
    expect(digests.size).toBe(variants.length);
  });

  it('text that splits another way across fields is not the same row', () => {
    // Each pair joins to the same characters, with separators a naive concatenation would use.
    const pairs = [
      [
        { domain: 'a.com', company_name: 'xy' },
        { domain: 'a.comx', company_name: 'y' },
      ],
      [
        { domain: 'a', company_name: 's1:b' },
        { domain: 'as1:', company_name: 'b' },
      ],
      [
        { domain: 'a', technologies: [{ t: 'X;', c: 'Y' }] },
        { domain: 'a', technologies: [{ t: 'X' }, { c: 'Y' }] },
      ],
      [{ domain: 'a\u0000b' }, { 'a\u0000': 'b' }],
    ];
    for (const [one, other] of pairs) expect(rowDigest(row(one!))).not.toBe(rowDigest(row(other!)));
  });
});
