import { describe, expect, it } from 'vitest';
import { ContactSizing } from '../../../src/core/contacts/sizing.js';

/** Five seniorities, most senior first: cxo, vp, director, manager, staff. */
const SENIORITIES = 5;

function repeat(times: number, learn: () => void): void {
  for (let index = 0; index < times; index++) learn();
}

describe('ContactSizing: contacts expected of a domain, learned from the answers so far', () => {
  it('knows nothing before an answer, or the per-domain count the caller gave, spread evenly', () => {
    expect(new ContactSizing(SENIORITIES).expectedOfNewDomain(0, 4)).toBeUndefined();
    const sizing = new ContactSizing(SENIORITIES, 50);
    expect(sizing.expectedOfNewDomain(0, 4)).toBe(50);
    expect(sizing.expectedOfNewDomain(0, 1)).toBe(20);
  });

  it('takes the means of first calls answered whole; a seniority not seen holds at least all above it', () => {
    const sizing = new ContactSizing(SENIORITIES);
    sizing.learnLayers(100, 0, 2, [100, 200, 400]);
    // cxo 1, vp 2, director 4 per domain; manager at least 1 + 2 + 4 = 7, staff at least 14.
    expect(sizing.expectedOfNewDomain(0, 2)).toBe(7);
    expect(sizing.expectedOfNewDomain(3, 4)).toBe(21);
    sizing.learnLayers(100, 0, 4, [100, 200, 400, 800, 1500]);
    // Now seen whole in 200 domains above manager, 100 at manager and staff.
    expect(sizing.expectedOfNewDomain(0, 4)).toBe(1 + 2 + 4 + 8 + 15);
  });

  it('a cut first call says its seniority held at least what it showed', () => {
    const sizing = new ContactSizing(SENIORITIES);
    sizing.learnCut(10, 0, 1000);
    expect(sizing.expectedOfNewDomain(0, 0)).toBe(100);
  });

  it('before whole domains are known, what is left scales with what the domain showed against the mean', () => {
    const sizing = new ContactSizing(SENIORITIES);
    sizing.learnLayers(100, 0, 4, [100, 200, 400, 800, 1500]);
    // Means: 7 above manager, 23 at manager and staff; 2 rows added to both sides of the comparison.
    expect(sizing.expectedBelowKept(5, 3, 4)).toBeCloseTo((23 * (5 + 2)) / (7 + 2), 10);
    expect(sizing.expectedBelowKept(0, 3, 4)).toBeCloseTo((23 * 2) / 9, 10);
  });

  it('then a domain empty above is expected to hold what such domains held; the others in proportion', () => {
    const sizing = new ContactSizing(SENIORITIES);
    sizing.learnLayers(100, 0, 4, [100, 200, 400, 800, 1500]);
    repeat(20, () => sizing.learnDomain([0, 0, 0, 0, 1]));
    repeat(20, () => sizing.learnDomain([1, 2, 4, 8, 16]));
    // Empty above manager: 20 staff over 20 domains. Others: 7 above manager, 24 at manager and staff.
    expect(sizing.expectedBelowKept(0, 3, 4)).toBe(1);
    expect(sizing.expectedBelowKept(14, 3, 4)).toBe(48);
    // Above staff they held 15 each, and 16 staff: a domain that showed 15 above is expected to hold 16.
    expect(sizing.expectedBelowKept(15, 4, 4)).toBe(16);
    // Empty above staff: the same 20 domains with one staff contact each.
    expect(sizing.expectedBelowKept(0, 4, 4)).toBe(1);
  });
});
