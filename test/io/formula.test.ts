import { describe, expect, it } from 'vitest';
import { neutralizeFormula } from '../../src/io/formula.js';

describe('formula neutralisation', () => {
  it.each(['=1+1', '+1', '-1', '@x', '\tx', '\rx', '\nx', '\uFF1D1'])('prefixes %j', (cell) => {
    expect(neutralizeFormula(cell)).toBe(`'${cell}`);
  });
  it.each(['', 'plain', "'=already", ' =space'])('leaves %j alone', (cell) => {
    expect(neutralizeFormula(cell)).toBe(cell);
  });
  // No letter: no function, cell or program can be named, so nothing can run (issue 36: LibreOffice showed the ').
  it.each(['+27 21 485 9682', '+1 (415) 555-0100', '+44.20.7946.0958', '+4915112345678'])(
    'leaves the phone number %j alone',
    (cell) => expect(neutralizeFormula(cell)).toBe(cell),
  );
  it.each([
    '+1 415',
    '+1+1',
    '+1 415 555 0100 A1',
    '+1-2-3-4-5-6+SUM(A1)',
    '+(1)',
    '-27 21 485 9682',
    '+ 1 2 3 4 5 6x',
  ])('still guards %j', (cell) => expect(neutralizeFormula(cell)).toBe(`'${cell}`));
});
