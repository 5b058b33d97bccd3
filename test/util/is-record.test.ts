import { describe, expect, it } from 'vitest';
import { isRecord } from '../../src/util/is-record.js';

describe('isRecord', () => {
  it('accepts objects only', () => {
    expect(isRecord({ a: 1 })).toBe(true);
    expect(isRecord([])).toBe(false);
    expect(isRecord(null)).toBe(false);
    expect(isRecord('x')).toBe(false);
  });
});
