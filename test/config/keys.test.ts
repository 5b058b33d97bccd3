import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS, CONFIG_KEY_SPECS } from '../../src/config/keys.js';
import { OUTPUT_FORMATS } from '../../src/io/writers.js';

describe('the key table', () => {
  it('lists the keys the issue asks for', () => {
    expect(CONFIG_KEYS).toEqual(
      expect.arrayContaining(['api-key', 'base-url', 'max-age', 'concurrency', 'format', 'cursor-param']),
    );
  });

  it('names every output format in the help of `format` (written out to keep start-up light)', () => {
    for (const format of OUTPUT_FORMATS) expect(CONFIG_KEY_SPECS.format.summary).toContain(format);
  });

  it('marks api-key and team-key as secret', () => {
    expect(CONFIG_KEYS.filter((key) => CONFIG_KEY_SPECS[key].secret)).toEqual(['api-key', 'team-key']);
  });
});
