import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCompaniesPageBytes } from '../../src/api/fast-json.js';
import { companiesPage, sampleCompany } from '../helpers/scripted-server.js';

/** The fast reader may decline (undefined), but what it returns must be JSON.parse's value, key order included. */
function expectJsonParseOrDecline(text: string | Buffer): unknown {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const fast = parseCompaniesPageBytes(bytes);
  if (fast !== undefined) expect(JSON.stringify(fast)).toBe(JSON.stringify(JSON.parse(bytes.toString('utf8'))));
  return fast;
}

const page = (rows: unknown[], rest: Record<string, unknown> = {}) => JSON.stringify({ ...companiesPage([]), data: rows, ...rest });

describe('parseCompaniesPageBytes', () => {
  it('reads a page as the service writes it, rows with descriptions, unicode, escapes and extras', () => {
    const rows = [
      sampleCompany('a.com'),
      { ...sampleCompany('b.com'), company_name: 'Łódź “Zürich” 東京 \u2028 "quoted" \\ },{"domain":', description: 'x' },
      { ...sampleCompany('c.com'), technologies: [{ t: 'jQuery', c: 'JS', v: { nested: [{ a: 1 }] } }], later: [{ domain: 'inner' }] },
    ];
    expect(expectJsonParseOrDecline(page(rows))).toBeDefined();
  });

  it('declines, and never misreads, what it does not recognise', () => {
    const valid = page([sampleCompany('a.com'), sampleCompany('b.com')]);
    const cases = [
      ` ${valid}`, // leading white space
      `\ufeff${valid}`, // byte order mark
      JSON.stringify({ data: [sampleCompany('a.com')], meta: {}, next_cursor: null }, null, 2), // pretty-printed
      page([{ ...sampleCompany('a.com'), more: [{ domain: 'x' }, { domain: 'y' }] }, sampleCompany('b.com')]), // nested `},{"domain":`
      page([sampleCompany('a.com'), { ...sampleCompany('b.com'), technologies: [{ t: 'x', c: 'y' }], after: [{ z: 1 }], tail: 1 }]), // `}],"` inside the last row
      `${valid.slice(0, -1)},"data":[]}`, // a second data key, which JSON.parse keeps
      valid.slice(0, -5), // cut short
      valid.replace('"a.com"', '"a.com",,'), // broken
      '{"data":[]}',
      '{"data":[{"domain":"a.com"}]}', // rows last
    ];
    for (const text of cases) expectJsonParseOrDecline(text);
    expect(parseCompaniesPageBytes(Buffer.from(`${valid.slice(0, -1)},"data":[]}`))).toBeUndefined();
    expect(parseCompaniesPageBytes(Buffer.concat([Buffer.from(valid.slice(0, 30)), Buffer.from([0xff, 0xfe]), Buffer.from(valid.slice(30))]))).toBeUndefined();
  });

  it('equals JSON.parse or declines on arbitrary rows and tails', () => {
    const row = fc.oneof(
      fc.constant(sampleCompany('a.com')),
      fc.dictionary(fc.constantFrom('domain', 'technologies', 'x', 'data', 'meta'), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }).map((extra) => ({ domain: 'd.com', ...extra })),
      fc.jsonValue({ maxDepth: 2 }),
    );
    fc.assert(
      fc.property(fc.array(row, { maxLength: 5 }), fc.dictionary(fc.constantFrom('meta', 'next_cursor', 'data', 'x'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }), (rows, rest) => {
        expectJsonParseOrDecline(page(rows, rest));
      }),
      { numRuns: 1500 },
    );
  });
});
