/**
 * The bytes of prospect's CSV, through its public writer (createRowWriter), against literal examples
 * written out by hand: RFC 4180 quoting, plus quotes around cells a spreadsheet would otherwise
 * mangle (leading or trailing white space, a carriage return), and the formula guard's apostrophe.
 */
import { describe, expect, it } from 'vitest';
import { renderCsv } from '../helpers/csv.js';

/** One cell, guard off: the document is the header line and the cell's line. */
const oneCell = (value: string) => renderCsv([[value]], 1, false);

describe("prospect's CSV writer, byte for byte", () => {
  it.each([
    ['plain', 'plain'],
    ['', ''],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['"', '""""'],
    ['two\nlines', '"two\nlines"'],
    ['crlf\r\ninside', '"crlf\r\ninside"'],
    ['cr\rinside', '"cr\rinside"'],
    ['x\r', '"x\r"'],
    [' lead', '" lead"'],
    ['trail ', '"trail "'],
    ['\ttab', '"\ttab"'],
    ['\u00a0nbsp', '"\u00a0nbsp"'],
    ["'+1 415", "'+1 415"],
    ['semi;colon', 'semi;colon'],
    ['back\\slash', 'back\\slash'],
    ['Cao & Partners Co., Ltd.', '"Cao & Partners Co., Ltd."'],
    ['bücher ≠ 本', 'bücher ≠ 本'],
  ])('%j is written %j', async (value, field) => {
    expect(await oneCell(value)).toBe(`c0\n${field}\n`);
  });

  it('writes the header, then one line per row, fields joined by commas, LF line ends', async () => {
    expect(
      await renderCsv(
        [
          ['a', 'b'],
          ['c,d', ''],
          ['', 'e"f'],
        ],
        2,
        false,
      ),
    ).toBe('c0,c1\na,b\n"c,d",\n,"e""f"\n');
  });

  it('quotes header names like cells', async () => {
    expect(await renderCsv([['1', '2']], ['plain', 'with,comma'], false)).toBe('plain,"with,comma"\n1,2\n');
  });

  it('writes the header alone when there are no rows', async () => {
    expect(await renderCsv([], 3, false)).toBe('c0,c1,c2\n');
  });

  it("with the formula guard, prefixes ' to a cell that starts with = + - @ tab CR LF, then quotes as usual", async () => {
    const cells = [
      '=1+1',
      '+1 415',
      '-2+3',
      '@SUM(1,1)',
      '\t=1',
      '\r=1',
      '\n=1',
      '\uFF1D1+1',
      'plain',
      "'=x",
      ' =y',
      'a=b',
      '',
    ];
    const fields = [
      "'=1+1",
      "'+1 415",
      "'-2+3",
      `"'@SUM(1,1)"`,
      "'\t=1",
      `"'\r=1"`,
      `"'\n=1"`,
      "'\uFF1D1+1",
      'plain',
      "'=x",
      '" =y"',
      'a=b',
      '',
    ];
    const header = cells.map((_, index) => `c${index}`).join(',');
    expect(await renderCsv([cells], cells.length, true)).toBe(`${header}\n${fields.join(',')}\n`);
  });

  it('without the guard (--no-escape-formulas), writes such cells as they are', async () => {
    expect(await renderCsv([['=1+1', '@x', '\n=1']], 3, false)).toBe('c0,c1,c2\n=1+1,@x,"\n=1"\n');
  });
});
