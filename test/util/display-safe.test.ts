/**
 * The one function that makes text from outside safe to draw (issue 34): every kind of control a
 * terminal obeys goes, whole sequences and not only their ESC, and printable text (accents, CJK,
 * emoji, Arabic and Hebrew letters) stays.
 */
import { describe, expect, it } from 'vitest';
import { displaySafe, displaySafeLine } from '../../src/util/display-safe.js';

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('displaySafe', () => {
  it.each([
    ['CSI colour', 'a\u001b[31mb\u001b[0mc', 'abc'],
    ['CSI clear screen and cursor', 'a\u001b[2J\u001b[H\u001b[?25lb', 'ab'],
    ['8-bit CSI', 'a\u009b31mb', 'ab'],
    ['OSC 0 title ended by BEL', 'a\u001b]0;owned\u0007b', 'ab'],
    ['OSC 0 title ended by ST', 'a\u001b]0;owned\u001b\\b', 'ab'],
    ['OSC 8 link', '\u001b]8;;https://evil.example\u0007click\u001b]8;;\u0007', 'click'],
    ['OSC 52 clipboard', 'a\u001b]52;c;cm0gLXJmIH4=\u0007b', 'ab'],
    ['8-bit OSC ended by 8-bit ST', 'a\u009d0;owned\u009cb', 'ab'],
    ['OSC never ended', 'a\u001b]0;owned', 'a'],
    ['DCS', 'a\u001bPq#0;2;0;0;0\u001b\\b', 'ab'],
    ['APC and PM', 'a\u001b_x\u001b\\b\u001b^y\u001b\\c', 'abc'],
    ['ESC with intermediate', 'a\u001b(Bb\u001b7c\u001bcd', 'abcd'],
    ['lone ESC at the end', 'ab\u001b', 'ab'],
    ['BEL, BS, CR, DEL', 'a\u0007b\u0008c\rd\u007fe', 'abcde'],
    ['C1 controls', 'a\u0085b\u0080c\u0081d', 'abcd'],
    [
      'bidi overrides and isolates',
      '\u202egnp.exe\u202c \u2066x\u2069 \u2067y\u2069 \u2068z\u2069 \u202ab\u202c',
      'gnp.exe x y z b',
    ],
    ['bidi marks', 'a\u200eb\u200fc\u061cd', 'abcd'],
  ])('%s', (_name, input, expected) => {
    expect(displaySafe(input)).toBe(expected);
    expect(displaySafe(input)).not.toMatch(CONTROL);
  });

  it('keeps printable text of every script, tabs and line feeds', () => {
    const text = 'Procházka · 株式会社 · 🚀 · مرحبا · שלום\tend\nnext';
    expect(displaySafe(text)).toBe(text);
  });

  it('on one line: breaks and tabs are single spaces', () => {
    expect(displaySafeLine('a\r\n\tb\u2028c')).toBe('a b c');
  });

  it('leaves no control whatever the input (every code point below U+00A0 and the bidi ones, shuffled)', () => {
    const pool = [
      ...Array.from({ length: 0xa0 }, (_, code) => String.fromCharCode(code)),
      '\u061c',
      '\u200e',
      '\u200f',
      '\u202a',
      '\u202b',
      '\u202c',
      '\u202d',
      '\u202e',
      '\u2066',
      '\u2067',
      '\u2068',
      '\u2069',
      '[',
      ']',
      ';',
      '\\',
      'P',
      '_',
      '^',
      'X',
      '0',
      '8',
      'm',
    ];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let round = 0; round < 500; round++) {
      const text = Array.from({ length: 40 }, () => pool[next() % pool.length]).join('');
      expect(displaySafeLine(text)).not.toMatch(CONTROL);
    }
  });
});
