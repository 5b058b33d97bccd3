import { describe, expect, it } from 'vitest';
import { breakdownRows, type Breakdown } from '../../../src/core/count/breakdown.js';

const partition: Breakdown = {
  dimension: 'country',
  segments: [
    { value: 'united states', companies: 50, contacts: 500 },
    { value: 'germany', companies: 30, contacts: 10 },
    { value: 'france', companies: 15, contacts: 0 },
    { value: 'india', companies: 5, contacts: 2 },
  ],
  total: { companies: 100, contacts: 512 },
  byService: true,
  overlapping: false,
};

describe('breakdownRows', () => {
  it('keeps the top N and sums the rest into "other"', () => {
    expect(breakdownRows(partition, 2)).toEqual([
      { value: 'united states', companies: 50, contacts: 500, share: 0.5 },
      { value: 'germany', companies: 30, contacts: 10, share: 0.3 },
      { value: 'other', companies: 20, contacts: 2, share: 0.2, other: true },
    ]);
    expect(breakdownRows(partition, 0)).toHaveLength(4);
    expect(breakdownRows(partition, 4)).toHaveLength(4);
  });

  it('where a company is in several segments, "other" counts the companies in none of the top N', () => {
    const overlapping: Breakdown = {
      dimension: 'technology',
      segments: [
        { value: 'A', companies: 3, contacts: undefined },
        { value: 'B', companies: 2, contacts: undefined },
        { value: 'C', companies: 2, contacts: undefined },
      ],
      total: { companies: 4, contacts: undefined },
      byService: false,
      overlapping: true,
      memberships: [['A', 'B'], ['A', 'C'], ['A'], ['B', 'C']],
    };
    expect(breakdownRows(overlapping, 1).at(-1)).toEqual({
      value: 'other',
      companies: 1,
      contacts: undefined,
      share: 0.25,
      other: true,
    });
  });
});
