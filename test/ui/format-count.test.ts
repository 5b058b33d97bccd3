import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countOf, formatCount } from '../../src/ui/format-count.js';

describe('formatCount writes what toLocaleString("en-US") writes', () => {
  it('for whole numbers of any size and sign', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.integer({ min: -1e6, max: 1e6 })), (n) => {
        expect(formatCount(n)).toBe(n.toLocaleString('en-US'));
      }),
      { numRuns: 2000 },
    );
  });

  it('for the edges, by deferring to it', () => {
    for (const n of [0, -0, 999, 1000, 1_000_000, 2 ** 53, 1.5, Number.NaN, Number.POSITIVE_INFINITY])
      expect(formatCount(n)).toBe(n.toLocaleString('en-US'));
  });
});

describe('countOf', () => {
  it('gets singular and plural right, in the one number format', () => {
    expect(countOf(1, 'unit')).toBe('1 unit');
    expect(countOf(0, 'unit')).toBe('0 units');
    expect(countOf(2, 'call')).toBe('2 calls');
    expect(countOf(12_400, 'address', 'addresses')).toBe('12,400 addresses');
    expect(countOf(1, 'address', 'addresses')).toBe('1 address');
  });
});
