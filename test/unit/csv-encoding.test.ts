import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import { renderCsv } from '../helpers/csv.js';
import { describe, expect, it } from 'vitest';
import { neutralizeFormula } from '../../src/io/formula.js';

/** One field as prospect's CSV writer writes it (the header line `c0` cut off). */
const csvField = async (value: string) => (await renderCsv([[value]], 1, false)).slice('c0\n'.length, -1);
const csvCell = (value: string, guard: boolean) => (guard ? neutralizeFormula(value) : value);

/** What prospect wrote with csv-stringify before its CSV encoder was written by hand (bench, issue 8). */
// A carriage return inside a cell is quoted too: csv-stringify alone would leave it bare, and a
// spreadsheet reads a bare CR as the end of the row.
const reference = (records: string[][]) => stringify(records, { record_delimiter: 'unix', quoted_match: /^\s|\s$|\r/ });

const SPECIAL = ['"', ',', '\n', '\r', ' ', '\t', '\u00a0', '\u2028', '\ufeff', "'", '=', '+', '-', '@', ';', '\\', '\uFF1D'];
const tricky = fc.array(fc.oneof(fc.constantFrom(...SPECIAL), fc.string({ maxLength: 3 }), fc.string({ unit: 'binary', maxLength: 2 })), { maxLength: 8 }).map((parts) => parts.join(''));
const anyText = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), tricky);

const render = renderCsv;

describe('the hand-written CSV encoder writes exactly what csv-stringify wrote', () => {
  it('field by field', async () => {
    await fc.assert(
      fc.asyncProperty(anyText, async (value) => {
        expect(`${await csvField(value)}\n`).toBe(reference([[value]]));
      }),
      { numRuns: 3000 },
    );
  });

  it('whole documents, with and without the formula guard', async () => {
    const table = fc.integer({ min: 1, max: 6 }).chain((width) => fc.tuple(fc.constant(width), fc.array(fc.array(anyText, { minLength: width, maxLength: width }), { maxLength: 6 })));
    await fc.assert(
      fc.asyncProperty(table, fc.boolean(), async ([width, rows], guard) => {
        const header = Array.from({ length: width }, (_, index) => `c${index}`);
        const expected = reference([header]) + (rows.length > 0 ? reference(rows.map((row) => row.map((cell) => csvCell(cell, guard)))) : '');
        expect(await render(rows, width, guard)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('the cases that matter in practice', async () => {
    for (const value of ['', 'plain', 'a,b', 'say "hi"', 'two\nlines', 'cr\rinside', ' lead', 'trail ', '\ttab', 'x\r', "'+1 415", 'Cao & Partners Co., Ltd.']) {
      expect(`${await csvField(value)}\n`).toBe(reference([[value]]));
    }
  });
});

it('quotes a carriage return inside a cell, so no spreadsheet splits the row there', async () => {
  expect(await csvField('a\rb')).toBe('"a\rb"');
});
