/**
 * Streamed input (what every command reads): the same entries, invalid entries, problems and
 * duplicates however the text is cut into chunks, as when it is read whole (test/io/input/entries.test.ts
 * pins down what that reading is).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { domainEntries, emailEntries, streamEntries } from '../../../src/io/input/entries.js';
import { SeenKeys } from '../../../src/io/input/seen-keys.js';
import { collectEntries } from '../../helpers/input.js';

const company = (domain: string) => ({
  domain,
  company_name: 'A, "B"\nC',
  technologies: [{ n: 'React' }],
  crux_rank: 1,
});
const domainish = fc.oneof(
  fc.domain(),
  fc.constantFrom(
    'WWW.Acme.com',
    'http://foo.com:80/x',
    'bad_domain',
    'bücher.de',
    'bob@acme.com',
    '',
    '  ',
    'acme.com',
  ),
);
const eol = fc.constantFrom('\n', '\r\n', '\r');

/** Texts of every streamed format, with the mess users give: BOMs, blank lines, CRLF, duplicates, junk. */
const documents = fc.oneof(
  fc
    .tuple(fc.array(domainish, { maxLength: 12 }), eol, fc.boolean())
    .map(([domains, end, bom]) => (bom ? '\uFEFF' : '') + domains.map((d) => `${d}${end}`).join('') + `# note${end}`),
  fc
    .tuple(fc.array(domainish, { maxLength: 12 }), eol)
    .map(
      ([domains, end]) =>
        `\n\nname,Domain${end}` +
        domains.map((d, i) => `"n${i}, ""x""",${d}${end}`).join('') +
        `bad,"never closed${end}x.com${end}`,
    ),
  fc
    .tuple(fc.array(domainish, { maxLength: 12 }), fc.boolean())
    .map(
      ([domains, broken]) =>
        domains.map((d) => JSON.stringify(company(d))).join('\n') + (broken ? '\n{"domain": "trunc' : '\n'),
    ),
  fc
    .array(domainish, { maxLength: 12 })
    .map((domains) => JSON.stringify({ data: domains.map(company), meta: {} }, null, 2)),
  fc.constantFrom(
    '',
    '\n\n',
    'company,website\nAcme,acme.com\n',
    '[{"website": "acme.com"}]',
    '{"domain": 5}\n{"domain": "a.com"}\n',
  ),
);

describe('streamEntries', () => {
  it('gives the same entries, invalid entries, problems and counts however the text is cut', async () => {
    await fc.assert(
      fc.asyncProperty(documents, fc.array(fc.nat(), { maxLength: 8 }), async (text, cuts) => {
        expect(await collectEntries(text, { kind: 'domain' }, cuts)).toEqual(
          await collectEntries(text, { kind: 'domain' }),
        );
      }),
      { numRuns: 400 },
    );
  });

  it('reads email columns and multi-byte characters cut in two', async () => {
    const text = 'name,Email\nJürgen,jürgen@bücher.de\nBob,bob@acme.com\nBob,BOB@acme.com\nNone,\n';
    const whole = await collectEntries(text, { kind: 'email' });
    const bytes = Buffer.from(text);
    async function* byteCut(): AsyncGenerator<string> {
      const decoder = new TextDecoder();
      for (let at = 0; at < bytes.length; at += 3) yield decoder.decode(bytes.subarray(at, at + 3), { stream: true });
    }
    const collector = emailEntries();
    const values: string[] = [];
    for await (const value of streamEntries(byteCut(), { kind: 'email' }, collector)) values.push(value);
    expect(values).toEqual(whole.values);
    expect(values).toEqual(['bob@acme.com']);
    // Cut between its bytes, the non-ASCII address still arrives whole (and is refused whole).
    expect(collector.invalid.map((entry) => entry.value)).toEqual(['jürgen@bücher.de']);
    expect(collector.blanks).toBe(1);
    expect(collector.duplicates).toBe(1);
  });

  it('hands out the first entries before the input ends', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    async function* producer(): AsyncGenerator<string> {
      yield '{"domain": "acme.com"}\n';
      await held;
      yield '{"domain": "foo.com"}\n';
    }
    const entries = streamEntries(producer(), { kind: 'domain' }, domainEntries());
    expect(await entries.next()).toEqual({ done: false, value: 'acme.com' });
    release();
    expect(await entries.next()).toEqual({ done: false, value: 'foo.com' });
    expect((await entries.next()).done).toBe(true);
  });
});

describe('SeenKeys', () => {
  it('tells keys seen before from new ones, through its growth', () => {
    const seen = new SeenKeys();
    const keys = Array.from({ length: 50_000 }, (_, index) => `company-${index}.example.com`);
    expect(keys.every((key) => seen.add(key))).toBe(true);
    expect(keys.every((key) => !seen.add(key))).toBe(true);
    expect(seen.size).toBe(keys.length);
    expect(seen.add('')).toBe(true);
    expect(seen.add('')).toBe(false);
  });
});
