/**
 * The one function that makes text from outside safe to draw (issue 34): every kind of control a
 * terminal obeys goes, whole sequences and not only their ESC, and printable text (accents, CJK,
 * emoji, Arabic and Hebrew letters) stays.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { displaySafe, displaySafeLine, displayVisible, jsonSafe } from '../../src/util/display-safe.js';

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

describe('displaySafe: hidden characters and stacks of marks (issue 41)', () => {
  it.each([
    ['zero-width space, word joiner, BOM', 'a\u200bb\u2060c\ufeffd', 'abcd'],
    ['zero-width joiner and non-joiner', 'a\u200cb\u200dc', 'abc'],
    ['tag characters', `flag\udb40\udc67\udb40\udc62\udb40\udc7f`, 'flag'],
    ['soft hyphen and Mongolian vowel separator', 'a\u00adb\u180ec', 'abc'],
    ['40 marks on one letter keep 4', `z${'\u0301'.repeat(40)}y`, `z${'\u0301'.repeat(4)}y`],
    ['a letter with 2 marks is untouched', 'Ph\u1ea1\u0323m', 'Ph\u1ea1\u0323m'],
    [
      'Hindi with its vowel signs is untouched',
      '\u0928\u092e\u0938\u094d\u0924\u0947',
      '\u0928\u092e\u0938\u094d\u0924\u0947',
    ],
  ])('%s', (_, input, expected) => {
    expect(displaySafe(input)).toBe(expected);
  });

  it('a 5,000-mark cluster no longer makes a 5,000-character line', () => {
    expect(displaySafeLine(`Acme${'\u0300'.repeat(5000)} Inc`).length).toBeLessThan(20);
  });
});

describe('displayVisible: data on a terminal shows every control instead of obeying it', () => {
  it.each([
    ['ESC of an OSC 52', 'a\u001b]52;c;eA==\u0007b', 'a\u241b]52;c;eA==\u2407b'],
    ['CSI clear screen', '\u001b[2J', '\u241b[2J'],
    ['BS and CR', 'a\u0008\rb', 'a\u2408\u240db'],
    ['DEL', 'a\u007fb', 'a\u2421b'],
    ['NUL', '\u0000', '\u2400'],
    ['C1 CSI and NEL', '\u009b31m\u0085', '<U+009B>31m<U+0085>'],
    ['bidi override and isolate', '\u202egnp.exe\u2066', '<U+202E>gnp.exe<U+2066>'],
    ['line and paragraph separators', 'a\u2028b\u2029', 'a<U+2028>b<U+2029>'],
    ['a tag character, astral', 'x\udb40\udc41', 'x<U+E0041>'],
    ['zero-width space and BOM', '\u200b\ufeff', '<U+200B><U+FEFF>'],
    ['a stack of 10 marks', `e${'\u0301'.repeat(10)}`, `e${'\u0301'.repeat(4)}<+6 marks>`],
  ])('%s', (_, input, expected) => {
    expect(displayVisible(input)).toBe(expected);
  });

  it('keeps tab, line feed and every printable character', () => {
    const text = 'Procházka\tMüller, 東京, مرحبا, שלום 👩‍💻\n';
    expect(displayVisible(text)).toBe(text.replace('\u200d', '<U+200D>'));
  });

  it('leaves nothing a terminal acts on', () => {
    const all = Array.from({ length: 0x2070 }, (_, code) => String.fromCharCode(code)).join('');
    expect(displayVisible(all)).not.toMatch(CONTROL);
  });
});

describe('jsonSafe: a JSON text with no raw C1, bidi, zero-width or tag character', () => {
  const value = {
    name: 'a\u009b31m\u0085\u202egnp\u2066\u2028\u2029\u200b\ufeff\u00ad\u007f\udb40\udc41',
    'key\u202e': ['\u061c', 'plain Procházka 東京'],
  };
  const text = jsonSafe(JSON.stringify(value));

  it('escapes each of them', () => {
    expect(text).not.toMatch(
      /[\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|[\ud800-\udfff]/,
    );
    expect(text).toContain('\\u202e');
    expect(text).toContain('\\udb40\\udc41');
    expect(text).toContain('Procházka 東京');
  });

  it('python3 reads back the same value (an independent JSON reader)', () => {
    const run = spawnSync('python3', ['-c', 'import json,sys; print(json.dumps(json.load(sys.stdin)))'], {
      input: text,
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(value);
  });
});
