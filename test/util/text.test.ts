import { describe, expect, it } from 'vitest';
import { nonEmpty, shorten } from '../../src/util/text.js';

describe('nonEmpty', () => {
  it('trims, and treats unset and blank values alike', () => {
    expect(nonEmpty(undefined)).toBeUndefined();
    expect(nonEmpty('')).toBeUndefined();
    expect(nonEmpty(' \t\n')).toBeUndefined();
    expect(nonEmpty('  united states ')).toBe('united states');
  });
});

describe('shorten', () => {
  it('keeps text up to the limit and marks a cut within it', () => {
    expect(shorten('abcdef', 6)).toBe('abcdef');
    expect(shorten('abcdefg', 6)).toBe('abcde…');
    expect(shorten('abcdefg', 6, '...')).toBe('abc...');
  });
});
