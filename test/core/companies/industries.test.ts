import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/exit-codes.js';
import { INDUSTRY_LABELS, industryLabels } from '../../../src/core/companies/industries.js';

describe('the industry labels --industry takes', () => {
  it('are the sandbox dataset’s labels, in its order', async () => {
    const file = JSON.parse(await readFile(new URL('../../../fixtures/data/industries.json', import.meta.url), 'utf8'));
    expect([...INDUSTRY_LABELS]).toEqual(file.industries.map((industry: { name: string }) => industry.name));
  });

  it('match in any case and spacing, each once', () => {
    expect(industryLabels(['Apparel and Fashion', ' apparel  and fashion ', 'RETAIL'])).toEqual([
      'apparel and fashion',
      'retail',
    ]);
  });

  it.each([
    ['aparel', 'apparel and fashion'],
    ['fashion', 'apparel and fashion'],
    ['softwre development', 'software development'],
    ['health care', 'hospitals and health care'],
  ])('refuse "%s" with a usage error that suggests "%s"', (given, suggested) => {
    const error = (() => {
      try {
        industryLabels([given]);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toContain(`unknown --industry "${given}"`);
    expect((error as UsageError).hint).toContain(`"${suggested}"`);
  });

  it('refuse a label like none with the way to list them', () => {
    expect(() => industryLabels(['zzzzqqq'])).toThrow(UsageError);
    expect(() => industryLabels([' '])).toThrow('--industry cannot be empty.');
  });
});
