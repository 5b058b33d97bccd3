/**
 * Any rows of strings written by prospect's CSV writer read back exactly, by two readers that are
 * not prospect's: csv-parse (property-tested, with shrinking), and Python's csv module (one batch of
 * generated tables). With the formula guard on, the expected cell is stated here, from the README's
 * rule, not computed by prospect's code.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvRows, pythonCsvRows, renderCsv } from '../helpers/csv.js';
import { findProgram } from '../helpers/programs.js';

/** README, "Spreadsheet safety": these first characters make a spreadsheet run a cell (plus their full-width forms). */
const TRIGGERS = ['=', '+', '-', '@', '\t', '\r', '\n', '\uFF1D', '\uFF0B', '\uFF0D', '\uFF20'];
const guarded = (cell: string) => (cell !== '' && TRIGGERS.includes(cell[0]!) ? `'${cell}` : cell);

const cell = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom(...TRIGGERS).chain((first) => fc.string().map((rest) => first + rest)),
  fc
    .array(fc.constantFrom('"', ',', '\n', '\r', ' ', '\t', "'", '=', ';', '\u00a0', 'x'), { maxLength: 6 })
    .map((parts) => parts.join('')),
);
const table = fc
  .integer({ min: 1, max: 5 })
  .chain((width) => fc.array(fc.array(cell, { minLength: width, maxLength: width }), { minLength: 0, maxLength: 8 }));
const header = (width: number) => Array.from({ length: width }, (_, index) => `c${index}`);

describe('CSV writing, property-tested against csv-parse', () => {
  it('any rows of strings read back exactly (guard off)', async () => {
    await fc.assert(
      fc.asyncProperty(
        table.filter((rows) => rows.length > 0),
        async (rows) => {
          const width = rows[0]!.length;
          expect(csvRows(await renderCsv(rows, width, false))).toEqual([header(width), ...rows]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("with the guard, a cell read back is the cell with ' before a leading trigger, and no cell starts with one", async () => {
    await fc.assert(
      fc.asyncProperty(
        table.filter((rows) => rows.length > 0),
        async (rows) => {
          const width = rows[0]!.length;
          const read = csvRows(await renderCsv(rows, width, true)).slice(1);
          expect(read).toEqual(rows.map((row) => row.map(guarded)));
          for (const value of read.flat()) expect(TRIGGERS.includes(value[0] ?? '')).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });
});

const python = findProgram('python3');

describe.skipIf(python.skip)("CSV writing, read back by Python's csv module", () => {
  it('300 generated tables, with and without the guard', async () => {
    const cases = fc.sample(fc.tuple(table, fc.boolean()), { numRuns: 300, seed: 20261123 });
    const documents = await Promise.all(cases.map(([rows, guard]) => renderCsv(rows, rows[0]?.length ?? 1, guard)));
    const read = pythonCsvRows(documents);
    cases.forEach(([rows, guard], index) => {
      const width = rows[0]?.length ?? 1;
      // A line with nothing on it is a record of one empty field, which Python reads as [].
      const asRead = read[index]!.map((record) => (record.length === 0 && width === 1 ? [''] : record));
      expect(asRead, JSON.stringify(documents[index])).toEqual([
        header(width),
        ...rows.map((row) => (guard ? row.map(guarded) : row)),
      ]);
    });
  });
});
