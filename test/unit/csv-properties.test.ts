import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { renderCsv } from '../helpers/csv.js';
import { describe, expect, it } from 'vitest';
import { neutralizeFormula } from '../../src/io/formula.js';

const TRIGGERS = ['=', '+', '-', '@', '\t', '\r', '\n'];

const toCsv = (rows: string[][], escapeFormulas: boolean) => renderCsv(rows, rows[0]?.length ?? 1, escapeFormulas);

const cell = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom(...TRIGGERS).chain((first) => fc.string().map((rest) => first + rest)));
const table = fc.integer({ min: 1, max: 5 }).chain((width) => fc.array(fc.array(cell, { minLength: width, maxLength: width }), { minLength: 1, maxLength: 8 }));

describe('CSV writing, property-tested', () => {
  it('any rows of strings round-trip through a real CSV parser (guard off)', async () => {
    await fc.assert(
      fc.asyncProperty(table, async (rows) => {
        const parsed = parse(await toCsv(rows, false), { relax_column_count: false }) as string[][];
        expect(parsed.slice(1)).toEqual(rows);
      }),
      { numRuns: 300 },
    );
  });

  it('with the guard, every cell reads back as the neutralised value and none starts with a trigger', async () => {
    await fc.assert(
      fc.asyncProperty(table, async (rows) => {
        const parsed = (parse(await toCsv(rows, true)) as string[][]).slice(1);
        expect(parsed).toEqual(rows.map((row) => row.map(neutralizeFormula)));
        for (const value of parsed.flat()) expect(TRIGGERS.includes(value[0] ?? '')).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
