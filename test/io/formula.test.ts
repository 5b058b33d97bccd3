import { describe, expect, it } from 'vitest';
import { neutralizeFormula } from '../../src/io/formula.js';

describe('formula neutralisation', () => {
  it.each(['=1+1', '+1', '-1', '@x', '\tx', '\rx', '\nx', '\uFF1D1'])('prefixes %j', (cell) => {
    expect(neutralizeFormula(cell)).toBe(`'${cell}`);
  });
  it.each(['', 'plain', "'=already", ' =space'])('leaves %j alone', (cell) => {
    expect(neutralizeFormula(cell)).toBe(cell);
  });
});
