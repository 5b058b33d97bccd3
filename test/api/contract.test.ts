/**
 * src/api/contract.ts is the contract as data (issue 42): docs/api-contract.md's tolerance column is
 * held equal to it, row by row, and every setting it names is a config key with its variable.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONTRACT_SETTINGS, OPEN_POINTS } from '../../src/api/contract.js';
import { CONFIG_KEYS, CONFIG_KEY_SPECS } from '../../src/config/keys.js';

/** The decision table's rows: number → its four cells, read from the markdown. */
function decisionRows(): Map<string, string[]> {
  const text = readFileSync(new URL('../../docs/api-contract.md', import.meta.url), 'utf8');
  const table = text.slice(text.indexOf('## Decisions'), text.indexOf('## Details'));
  const rows = new Map<string, string[]>();
  for (const line of table.split('\n')) {
    const cells = line.startsWith('| ') ? line.slice(2, -2).split(' | ') : [];
    if (cells.length === 4 && /^\d+[a-z]?$/.test(cells[0]!)) rows.set(cells[0]!, cells);
  }
  return rows;
}

describe('the contract as data', () => {
  it("docs/api-contract.md's tolerance column is the list's, for every row the list names", () => {
    const rows = decisionRows();
    expect(rows.size).toBeGreaterThan(40);
    for (const row of new Set(OPEN_POINTS.map((point) => point.row))) {
      const points = OPEN_POINTS.filter((point) => point.row === row);
      const expected = points
        .map((point) => point.recognises + (point.setting === null ? '' : ` Setting: \`${point.setting}\`.`))
        .join(' ');
      expect(rows.get(row)?.[3], `row ${row}`).toBe(expected);
    }
  });

  it('a row of the table that names a setting is one of the list', () => {
    for (const [row, cells] of decisionRows()) {
      const named = [...cells[3]!.matchAll(/Setting: `([a-z-]+)`/g)].map((match) => match[1]);
      const listed = OPEN_POINTS.filter((point) => point.row === row).map((point) => point.setting);
      for (const setting of named) expect(listed, `row ${row}`).toContain(setting);
    }
  });

  it('each setting is adapted in one place: one open point, one config key, one PROSPECT_ variable', () => {
    expect(new Set(CONTRACT_SETTINGS).size).toBe(CONTRACT_SETTINGS.length);
    expect(CONTRACT_SETTINGS).toContain('verify-statuses');
    for (const setting of CONTRACT_SETTINGS) {
      expect(CONFIG_KEYS).toContain(setting);
      expect(CONFIG_KEY_SPECS[setting].env).toBe(`PROSPECT_${setting.toUpperCase().replaceAll('-', '_')}`);
    }
  });
});
