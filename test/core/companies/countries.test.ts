import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { countryCode, normalizeCountry } from '../../../src/core/companies/countries.js';

/** The sandbox dataset's countries, read from its data file (not through the code under test). */
const DATASET_COUNTRIES: string[] = JSON.parse(
  readFileSync(resolve(import.meta.dirname, '../../../fixtures/data/countries.json'), 'utf8'),
).countries.map((country: { name: string }) => country.name);

describe('countries as people write them', () => {
  it.each([
    ['US', 'united states'],
    ['USA', 'united states'],
    ['us', 'united states'],
    ['United States', 'united states'],
    ['United States of America', 'united states'],
    ['UK', 'united kingdom'],
    ['GB', 'united kingdom'],
    ['Great Britain', 'united kingdom'],
    ['Deutschland', 'germany'],
    ['DEU', 'germany'],
    ['Russian Federation', 'russia'],
    ['Czechia', 'czech republic'],
    ['Türkiye', 'turkey'],
    ['Korea, Republic of', 'south korea'],
    ['The Netherlands', 'netherlands'],
    ['UAE', 'united arab emirates'],
  ])('%s is %s', (written, name) => {
    expect(normalizeCountry(written)).toBe(name);
  });

  it('every country of the sandbox dataset keeps its name, and its ISO codes give that name', () => {
    expect(DATASET_COUNTRIES.length).toBeGreaterThan(40);
    for (const name of DATASET_COUNTRIES) {
      expect(normalizeCountry(name)).toBe(name);
      const code = countryCode(name);
      expect(code, name).toMatch(/^[A-Z]{2}$/);
      expect(normalizeCountry(code!.toLowerCase())).toBe(name);
    }
  });

  it('leaves a name it does not know to the service (which suggests), lower-cased', () => {
    expect(normalizeCountry('  Narnia ')).toBe('narnia');
  });
});
