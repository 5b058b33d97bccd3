/**
 * Streamed input (what `contacts` reads) against the whole-text reader the rest of the suite pins
 * down: the same entries, invalid entries, problems and duplicates, however the text is cut.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collectDomains, collectEmails, domainEntries, emailEntries, streamEntries } from '../../../src/io/input/entries.js';
import { SeenKeys } from '../../../src/io/input/seen-keys.js';

async function* chunked(text: string, cuts: number[]): AsyncGenerator<string> {
  let start = 0;
  for (const cut of [...new Set(cuts.map((at) => at % (text.length + 1)))].sort((a, b) => a - b)) {
    yield text.slice(start, cut);
    start = cut;
  }
  yield text.slice(start);
}

async function streamed(text: string, cuts: number[], kind: 'domain' | 'email', column?: string) {
  const collector = kind === 'domain' ? domainEntries() : emailEntries();
  const values: string[] = [];
  for await (const value of streamEntries(chunked(text, cuts), { kind, column }, collector)) values.push(value);
  return { values, invalid: collector.invalid, problems: collector.problems, duplicates: collector.duplicates, blanks: collector.blanks, format: collector.inputFormat };
}

const company = (domain: string) => ({ domain, company_name: 'A, "B"\nC', technologies: [{ n: 'React' }], crux_rank: 1 });
const domainish = fc.oneof(fc.domain(), fc.constantFrom('WWW.Acme.com', 'http://foo.com:80/x', 'bad_domain', 'bücher.de', 'bob@acme.com', '', '  ', 'acme.com'));
const eol = fc.constantFrom('\n', '\r\n', '\r');

/** Texts of every streamed format, with the mess users give: BOMs, blank lines, CRLF, duplicates, junk. */
const documents = fc.oneof(
  fc.tuple(fc.array(domainish, { maxLength: 12 }), eol, fc.boolean()).map(([domains, end, bom]) => (bom ? '\uFEFF' : '') + domains.map((d) => `${d}${end}`).join('') + `# note${end}`),
  fc.tuple(fc.array(domainish, { maxLength: 12 }), eol).map(([domains, end]) => `\n\nname,Domain${end}` + domains.map((d, i) => `"n${i}, ""x""",${d}${end}`).join('') + `bad,"never closed${end}x.com${end}`),
  fc.tuple(fc.array(domainish, { maxLength: 12 }), fc.boolean()).map(([domains, broken]) => domains.map((d) => JSON.stringify(company(d))).join('\n') + (broken ? '\n{"domain": "trunc' : '\n')),
  fc.array(domainish, { maxLength: 12 }).map((domains) => JSON.stringify({ data: domains.map(company), meta: {} }, null, 2)),
  fc.constantFrom('', '\n\n', 'company,website\nAcme,acme.com\n', '[{"website": "acme.com"}]', '{"domain": 5}\n{"domain": "a.com"}\n'),
);

function isPlainObject(text: string): boolean {
  try {
    const value = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) && !Array.isArray(value.data);
  } catch {
    return false;
  }
}

describe('streamEntries', () => {
  it('gives what the whole-text reader gives, for every format and any cutting of the text', async () => {
    await fc.assert(
      fc.asyncProperty(documents, fc.array(fc.nat(), { maxLength: 8 }), async (text, cuts) => {
        const whole = collectDomains(text);
        const stream = await streamed(text, cuts, 'domain');
        // A one-line, one-object text is a JSON document to the whole-text reader and one NDJSON
        // line to the stream; both read the one record.
        const oneObject = whole.format === 'json' && !text.trim().includes('\n') && isPlainObject(text);
        expect(stream).toEqual({ values: whole.domains, invalid: whole.invalid, problems: whole.problems, duplicates: whole.duplicates, blanks: whole.blanks, format: oneObject ? 'ndjson' : whole.format });
      }),
      { numRuns: 400 },
    );
  });

  it('reads email columns and multi-byte characters cut in two', async () => {
    const text = 'name,Email\nJürgen,jürgen@bücher.de\nBob,bob@acme.com\nBob,BOB@acme.com\nNone,\n';
    const whole = collectEmails(text);
    const bytes = Buffer.from(text);
    async function* byteCut(): AsyncGenerator<string> {
      const decoder = new TextDecoder();
      for (let at = 0; at < bytes.length; at += 3) yield decoder.decode(bytes.subarray(at, at + 3), { stream: true });
    }
    const collector = emailEntries();
    const values: string[] = [];
    for await (const value of streamEntries(byteCut(), { kind: 'email' }, collector)) values.push(value);
    expect(values).toEqual(whole.emails);
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
