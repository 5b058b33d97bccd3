import { describe, expect, it } from 'vitest';
import { atSeniority, leftOutText } from '../../../src/core/shared/caveats.js';

describe('the reasons an empty result gives', () => {
  it('names what was left out, with counts, and nothing when nothing was', () => {
    expect(leftOutText(0, 0)).toBe('');
    expect(leftOutText(1, 0)).toBe(': 1 stale address dropped (--stale drop)');
    expect(leftOutText(3, 2)).toBe(': 3 stale addresses dropped (--stale drop), 2 contacts on --exclude-emails');
  });

  it('names the seniorities asked for, only when they were narrowed', () => {
    expect(atSeniority(undefined)).toBe('');
    expect(atSeniority(['cxo', 'vp'])).toBe(' at cxo, vp');
  });
});
