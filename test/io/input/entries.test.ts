import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/exit-codes.js';
import { renderCsv } from '../../helpers/csv.js';
import { collectDomains, collectEmails, entryValues, readTable } from '../../helpers/input.js';
import { scratchDir } from '../../helpers/scratch.js';
import { formatInvalidEntry } from '../../../src/io/input/entries.js';
import { formatProblem } from '../../../src/io/input/model.js';
import { openInputStream, type InputSource } from '../../../src/io/input/source.js';

/** The whole input of a source, as a command would read it, or null when there is none. */
async function readInputText(source: InputSource) {
  const stream = openInputStream(source);
  if (stream === null) return null;
  let text = '';
  for await (const chunk of stream.open()) text += chunk;
  return { text, origin: stream.origin, ...(stream.format === undefined ? {} : { format: stream.format }) };
}

const COMPANIES_HEADER =
  'domain,company_name,employee_range,industry,country,crux_rank,phone,linkedin_url,tech_count,technologies';

function company(domain: string, name: string): Record<string, unknown> {
  return {
    domain,
    company_name: name,
    employee_range: '11-50',
    industry: 'Software',
    country: 'DE',
    crux_rank: 1000,
    phone: '+49 30 1234567',
    linkedin_url: null,
    tech_count: 2,
    technologies: [
      { n: 'React', v: '18.2.0' },
      { n: 'Stripe', v: null },
    ],
  };
}

describe('plain lines', () => {
  it('ignores blank lines and comments, tolerates quotes and trailing commas', async () => {
    const text = [
      '# prospects for Q3',
      '',
      'acme.com',
      '  "foo.com",',
      "'bar.com'",
      'baz.com;',
      'qux.com  # the big one',
      '   ',
      '',
    ].join('\n');
    const result = await collectDomains(text);
    expect(result).toMatchObject({
      format: 'lines',
      domains: ['acme.com', 'foo.com', 'bar.com', 'baz.com', 'qux.com'],
      invalid: [],
      problems: [],
    });
  });

  it('reports junk with the line numbers of the original text', async () => {
    const text = 'acme.com\n\nhttp//foo\nbob@acme.com\n# note\n1.2.3.4\nfoo bar.com\n';
    expect((await collectDomains(text)).invalid).toEqual([
      { line: 3, value: 'http//foo', reason: 'no dot' },
      { line: 4, value: 'bob@acme.com', reason: 'an email address, not a domain' },
      { line: 6, value: '1.2.3.4', reason: 'an IP address, not a domain' },
      { line: 7, value: 'foo bar.com', reason: 'contains whitespace' },
    ]);
  });

  it('drops duplicates after normalisation, keeping the first-seen order', async () => {
    const text = 'b.com\nhttps://www.A.com/x\nwww.b.com\na.com\nc.com\nB.COM.\n';
    expect(await collectDomains(text)).toMatchObject({ domains: ['b.com', 'a.com', 'c.com'], duplicates: 3 });
  });

  it('counts CRLF and lone CR as one line break each', async () => {
    expect(await entryValues('a.com\r\n\r\nb.com\rc.com\r\n', { kind: 'domain' })).toEqual([
      { value: 'a.com', line: 1 },
      { value: 'b.com', line: 3 },
      { value: 'c.com', line: 4 },
    ]);
  });

  it('returns nothing, without problems, for empty input', async () => {
    for (const text of ['', '\n\n', '\uFEFF', '  \r\n']) {
      expect(await collectDomains(text)).toMatchObject({ domains: [], invalid: [], problems: [], format: 'lines' });
    }
  });

  it('reads a list of a few thousand email addresses, case-insensitively unique', async () => {
    const text = 'Jane@Acme.com\njane@acme.com\nbad@\nbob@acme.com\n';
    expect(await collectEmails(text)).toMatchObject({
      format: 'lines',
      emails: ['Jane@acme.com', 'bob@acme.com'],
      duplicates: 1,
      invalid: [{ line: 3, value: 'bad@', reason: 'domain: empty' }],
    });
  });

  it('treats command-line arguments as lines whatever they look like', async () => {
    expect(await collectDomains('domain\nacme.com', { format: 'lines' })).toMatchObject({
      domains: ['acme.com'],
      invalid: [{ line: 1, value: 'domain' }],
    });
    expect(await collectDomains('domain\nacme.com')).toMatchObject({
      domains: ['acme.com'],
      invalid: [],
      format: 'csv',
    });
  });
});

describe('CSV', () => {
  it('reads a CSV with a BOM and CRLF line endings', async () => {
    const text = '\uFEFFname,Domain\r\nAcme,acme.com\r\n"Foo, Inc.",https://www.foo.com/\r\n\r\nJunk,not_a_domain\r\n';
    expect(await collectDomains(text)).toEqual({
      format: 'csv',
      domains: ['acme.com', 'foo.com'],
      invalid: [{ line: 5, value: 'not_a_domain', reason: 'contains "_"' }],
      duplicates: 0,
      blanks: 0,
      problems: [],
    });
  });

  it('reads what `prospect companies` writes, formula-escaped cells included', async () => {
    const text = [
      COMPANIES_HEADER,
      'acme.com,Acme,11-50,Software,DE,1000,+49 30 1234567,,2,React;Stripe',
      'foo.com,"\'=HYPERLINK(""x"")",51-200,Retail,FR,2000,,https://www.linkedin.com/company/foo,1,Shopify',
      '',
    ].join('\n');
    expect((await collectDomains(text)).domains).toEqual(['acme.com', 'foo.com']);
    const table = await readTable(text, { kind: 'domain' });
    expect(table.header).toEqual(COMPANIES_HEADER.split(','));
    expect(table.rows[0]?.record['phone']).toBe('+49 30 1234567');
    expect(table.rows[1]?.record['company_name']).toBe('=HYPERLINK("x")');
  });

  it('gives each record the line it starts on, even after a quoted multi-line cell', async () => {
    const text = 'domain,notes\nacme.com,"line one\nline two\nline three"\nbad_domain,x\n';
    expect((await collectDomains(text)).invalid).toEqual([{ line: 5, value: 'bad_domain', reason: 'contains "_"' }]);
    expect((await readTable(text, { kind: 'domain' })).rows.map((row) => row.line)).toEqual([2, 5]);
  });

  it('detects semicolon and tab delimiters', async () => {
    expect(await collectDomains('Name;Domain\nAcme;acme.com\n"A;B";b.com\n')).toMatchObject({
      format: 'csv',
      domains: ['acme.com', 'b.com'],
    });
    expect(await collectDomains('name\tdomain\nAcme, Inc\tacme.com\n')).toMatchObject({
      format: 'csv',
      domains: ['acme.com'],
    });
  });

  it('reads a single-column CSV whose header is the column name', async () => {
    expect(await collectDomains('Domain\nacme.com\nfoo.com\n')).toMatchObject({
      format: 'csv',
      domains: ['acme.com', 'foo.com'],
      invalid: [],
    });
    expect(await collectEmails('email\njane@acme.com\n')).toMatchObject({ format: 'csv', emails: ['jane@acme.com'] });
  });

  it('uses an explicitly named column, matched case- and spacing-insensitively', async () => {
    const text = 'Company,Web Site\nAcme,https://acme.com\n';
    expect(await collectDomains(text, { column: 'web_site' })).toMatchObject({
      format: 'csv',
      domains: ['acme.com'],
      problems: [],
    });
  });

  it('reports a missing explicit column with the columns there are', async () => {
    const result = await collectDomains('Company,Website\nAcme,acme.com\n', { column: 'url' });
    expect(result).toMatchObject({ format: 'csv', domains: [], invalid: [] });
    expect(result.problems).toEqual([{ line: 1, message: 'column "url" not found; columns are: Company, Website' }]);
  });

  it('recognises a header without the default column instead of reading it as junk domains', async () => {
    const result = await collectDomains('\n\nCompany,Site\nAcme,acme.com\n');
    expect(result.problems).toEqual([
      {
        line: 3,
        message: expect.stringMatching(/^column "domain" or "website" .* not found; columns are: Company, Site$/),
      },
    ]);
    expect(result.invalid).toEqual([]);
  });

  it("reads a CRM export's Website column, the name the exclusion lists read too (issue 36)", async () => {
    const result = await collectDomains('\n\nCompany,Website\nAcme,https://www.acme.com/\n');
    expect(result).toMatchObject({ format: 'csv', domains: ['acme.com'], problems: [] });
  });

  it('keeps reading a list whose lines merely end with commas', async () => {
    expect(await collectDomains('acme.com,\nfoo.com,\n')).toMatchObject({
      format: 'lines',
      domains: ['acme.com', 'foo.com'],
    });
  });

  it('prefers business_email, then email, and counts rows without an address', async () => {
    const text =
      'full_name,Business Email,email\nJane,Jane@ACME.com,x@y.com\nAl,,al@y.com\nBo,jane@acme.com,\nCy,broken@,\n';
    expect(await collectEmails(text)).toEqual({
      format: 'csv',
      emails: ['Jane@acme.com'],
      invalid: [{ line: 5, value: 'broken@', reason: 'domain: empty' }],
      duplicates: 1,
      blanks: 1,
      problems: [],
    });
    expect((await collectEmails('name,email\nJane,jane@acme.com\n')).emails).toEqual(['jane@acme.com']);
  });

  it('says which columns it looked for when none is there', async () => {
    expect((await collectEmails('first,last\nJane,Doe\n')).problems).toEqual([
      {
        line: 1,
        message:
          'column "business_email" or "email" or "email_address" or "e_mail" or "work_email" not found; ' +
          'columns are: first, last',
      },
    ]);
  });

  it('reports an unclosed quote instead of silently dropping the rest of the file', async () => {
    const result = await collectDomains('domain,name\nacme.com,Acme\nfoo.com,"Foo\nbar.com,Bar\n');
    expect(result.domains).toEqual(['acme.com']);
    expect(result.problems).toEqual([
      { line: 3, message: 'a quoted field is never closed, so the rest of the file could not be read' },
    ]);
  });

  it('tolerates stray quotes, short and long rows', async () => {
    const table = await readTable('email,name\njane@acme.com,Jane "JD" Doe\nbob@acme.com\nal@acme.com,Al,extra\n', {
      kind: 'email',
    });
    expect(table.rows.map((row) => row.record)).toEqual([
      { email: 'jane@acme.com', name: 'Jane "JD" Doe' },
      { email: 'bob@acme.com', name: '' },
      { email: 'al@acme.com', name: 'Al' },
    ]);
  });
});

describe('JSON and NDJSON', () => {
  it('reads the `prospect companies --format json` envelope with each record line', async () => {
    const text = JSON.stringify(
      {
        data: [company('acme.com', 'Acme'), company('bad_domain', 'Bad'), company('foo.com', 'Foo')],
        meta: { total: 3 },
      },
      null,
      2,
    );
    const lines = text.split('\n');
    const startOf = (domain: string): number => lines.findIndex((line) => line.includes(`"domain": "${domain}"`));
    const result = await collectDomains(text);
    expect(result).toMatchObject({ format: 'json', domains: ['acme.com', 'foo.com'], problems: [] });
    expect(result.invalid).toEqual([{ line: startOf('bad_domain'), value: 'bad_domain', reason: 'contains "_"' }]);
  });

  it('reads a compact envelope and keeps nested values as JSON text in records', async () => {
    const text = JSON.stringify({ data: [company('acme.com', 'Acme')], meta: {} });
    const table = await readTable(text, { kind: 'domain' });
    expect(table).toMatchObject({ format: 'json', column: 'domain', problems: [] });
    expect(table.header).toEqual(COMPANIES_HEADER.split(','));
    expect(table.rows[0]?.record).toMatchObject({
      domain: 'acme.com',
      crux_rank: '1000',
      linkedin_url: '',
      technologies: '[{"n":"React","v":"18.2.0"},{"n":"Stripe","v":null}]',
    });
  });

  it('reads `prospect companies --format ndjson` output, one record per line', async () => {
    const text =
      [company('acme.com', 'Acme'), company('foo.com', 'Foo'), company('acme.com', 'Again')]
        .map((c) => JSON.stringify(c))
        .join('\n') + '\n';
    expect(await collectDomains(text)).toMatchObject({
      format: 'ndjson',
      domains: ['acme.com', 'foo.com'],
      duplicates: 1,
      problems: [],
    });
  });

  it('reports a broken NDJSON line by its number and keeps the others', async () => {
    const text = '{"domain":"acme.com"}\n\n{"domain":"foo.com"}\n{"domain":"trunc\n';
    const result = await collectDomains(text);
    expect(result.domains).toEqual(['acme.com', 'foo.com']);
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]?.line).toBe(4);
    expect(result.problems[0]?.message).toMatch(/^not valid JSON/);
  });

  it('reads an array of strings and an array of objects, with line numbers', async () => {
    expect(await entryValues('[\n  "acme.com",\n  "foo.com"\n]', { kind: 'domain' })).toEqual([
      { value: 'acme.com', line: 2 },
      { value: 'foo.com', line: 3 },
    ]);
    expect(await entryValues('[{"domain": "a.com"},\n {"domain": "b.com"}]', { kind: 'domain' })).toEqual([
      { value: 'a.com', line: 1 },
      { value: 'b.com', line: 2 },
    ]);
  });

  it('locates elements correctly when strings contain brackets, commas and escaped quotes', async () => {
    const text =
      '{"meta": {"note": "a [tricky], \\"one\\""}, "data": [\n{"domain": "a.com", "x": "],["},\n\n{"domain": "b_c.com"}]}';
    expect((await collectDomains(text)).invalid).toEqual([{ line: 4, value: 'b_c.com', reason: 'contains "_"' }]);
  });

  it('reads a single JSON object on one line as one record (an NDJSON line: the first line decides)', async () => {
    expect(await collectDomains('{"domain": "acme.com", "name": "Acme"}')).toMatchObject({
      format: 'ndjson',
      domains: ['acme.com'],
    });
  });

  it('reads a single JSON object over several lines as one record', async () => {
    expect(await collectDomains('{\n  "domain": "acme.com",\n  "name": "Acme"\n}\n')).toMatchObject({
      format: 'json',
      domains: ['acme.com'],
    });
  });

  it('reads contacts JSON for emails, counting contacts without one', async () => {
    const contacts = [
      { domain: 'acme.com', full_name: 'Jane', business_email: 'jane@acme.com' },
      { domain: 'acme.com', full_name: 'Al', business_email: null },
    ];
    expect(await collectEmails(JSON.stringify({ data: contacts, meta: {} }))).toMatchObject({
      emails: ['jane@acme.com'],
      blanks: 1,
      problems: [],
    });
  });

  it('reports invalid JSON at the line where parsing failed', async () => {
    const result = await collectDomains('[\n  "acme.com",\n  "foo.com"\n  "bar.com"\n]');
    expect(result.format).toBe('json');
    expect(result.domains).toEqual([]);
    expect(result.problems[0]?.line).toBe(4);
    expect(result.problems[0]?.message).toMatch(/^not valid JSON/);
  });

  it('reports elements that are neither objects nor strings, and missing fields', async () => {
    expect((await collectDomains('["acme.com", 42, null]')).problems).toEqual([
      { line: 1, message: 'expected a JSON object or string' },
      { line: 1, message: 'expected a JSON object or string' },
    ]);
    expect((await collectDomains('[{"site": "acme.com"}]')).problems).toEqual([
      { line: 1, message: expect.stringMatching(/^column "domain" or .* not found; columns are: site$/) },
    ]);
    expect((await collectDomains('{"data": 5}')).problems).toEqual([
      { line: 1, message: expect.stringMatching(/^column "domain" or .* not found; columns are: data$/) },
    ]);
    // A bare JSON string is not JSON input at all: it is a one-line list with quotes around it.
    expect(await collectDomains('"acme.com"')).toMatchObject({ format: 'lines', domains: ['acme.com'] });
  });
});

describe('parseRecords (for prospect verify)', () => {
  it('keeps every row and column of a CSV, and names the email column', async () => {
    const text = 'id,Email,Email\n1,jane@acme.com,old@acme.com\n2,,\n';
    const table = await readTable(text);
    expect(table).toEqual({
      format: 'csv',
      header: ['id', 'Email', 'Email_2'],
      column: 'Email',
      rows: [
        { line: 2, record: { id: '1', Email: 'jane@acme.com', Email_2: 'old@acme.com' } },
        { line: 3, record: { id: '2', Email: '', Email_2: '' } },
      ],
      problems: [],
    });
  });

  it('gives a plain list the header "email"', async () => {
    expect(await readTable('jane@acme.com\n\nbob@acme.com\n')).toEqual({
      format: 'lines',
      header: ['email'],
      column: 'email',
      rows: [
        { line: 1, record: { email: 'jane@acme.com' } },
        { line: 3, record: { email: 'bob@acme.com' } },
      ],
      problems: [],
    });
  });

  it('names empty header cells', async () => {
    expect((await readTable('email,,\na@b.com,x,y\n')).header).toEqual(['email', 'column_2', 'column_3']);
  });

  it("round-trips what prospect's CSV writer writes: any cell text, with the formula guard on", async () => {
    // A leading "'" before a formula character is exactly what the writer adds, so such text
    // cannot survive a round trip; carriage returns become line feeds.
    const cell = fc
      .string({ unit: 'binary', maxLength: 20 })
      .filter((text) => !text.startsWith("'") && !text.includes('\r'));
    const row = fc.record({
      domain: fc.domain().filter((d) => d.length <= 253 && !d.startsWith('www.')),
      company_name: cell,
      phone: cell,
    });
    await fc.assert(
      fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 8 }), async (rows) => {
        const written = await renderCsv(
          rows.map((r) => [r.domain, r.company_name, r.phone]),
          ['domain', 'company_name', 'phone'],
          true,
        );
        const table = await readTable(written, { kind: 'domain' });
        expect(table.problems).toEqual([]);
        expect(table.rows.map((r) => r.record)).toEqual(rows);
        expect((await collectDomains(written)).domains).toEqual([...new Set(rows.map((r) => r.domain))]);
      }),
      { numRuns: 300 },
    );
  });
});

describe('input properties', () => {
  it('never throws, whatever the text, for both kinds', async () => {
    const piece = fc.constantFrom(
      '\n',
      '\r\n',
      '\r',
      ',',
      ';',
      '\t',
      '"',
      '{',
      '}',
      '[',
      ']',
      ':',
      'domain',
      'email',
      'acme.com',
      '#',
      ' ',
      '\uFEFF',
      "'",
      'a@b.com',
      'data',
    );
    const structured = fc
      .array(fc.oneof(piece, fc.string({ maxLength: 5 })), { maxLength: 30 })
      .map((parts) => parts.join(''));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(structured, fc.string(), fc.string({ unit: 'binary' })),
        fc.option(fc.constantFrom('domain', 'Email', 'x')),
        async (text, column) => {
          const options = column === null ? {} : { column };
          const domains = await collectDomains(text, options);
          const emails = await collectEmails(text, options);
          for (const { line } of [...domains.invalid, ...domains.problems, ...emails.invalid, ...emails.problems]) {
            expect(line).toBeGreaterThanOrEqual(1);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('recovers any list of domains, whatever the line endings, blanks and duplicates', async () => {
    const eol = fc.constantFrom('\n', '\r\n', '\r');
    const item = fc.tuple(
      fc.domain().filter((d) => d.length <= 253),
      eol,
      fc.constantFrom('', '\n', '  \n', '# note\n'),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(item, { minLength: 1, maxLength: 20 }), fc.boolean(), async (items, bom) => {
        const text = (bom ? '\uFEFF' : '') + items.map(([domain, end, extra]) => `${domain}${end}${extra}`).join('');
        const expected = [...new Set(items.map(([domain]) => stripWww(domain)))];
        const result = await collectDomains(text);
        expect(result.domains).toEqual(expected);
        expect(result.duplicates).toBe(items.length - expected.length);
      }),
      { numRuns: 500 },
    );
  });
});

function stripWww(domain: string): string {
  let result = domain;
  while (result.startsWith('www.') && result.indexOf('.', 4) !== -1) result = result.slice(4);
  return result;
}

describe('messages', () => {
  it('formats invalid entries and problems for the user', async () => {
    expect(formatInvalidEntry({ line: 7, value: 'http//foo', reason: 'no dot' }, 'domain')).toBe(
      'line 7: "http//foo" is not a domain (no dot)',
    );
    expect(formatInvalidEntry({ line: 2, value: ' bad@ ', reason: 'domain: empty' }, 'email')).toBe(
      'line 2: "bad@" is not a valid email address (domain: empty)',
    );
    expect(formatInvalidEntry({ line: 1, value: 'x'.repeat(100), reason: 'no dot' }, 'domain')).toContain(
      `"${'x'.repeat(57)}..."`,
    );
    expect(formatProblem({ line: 3, message: 'not valid JSON' })).toBe('line 3: not valid JSON');
  });
});

describe('openInputStream', () => {
  let directory = '';
  beforeAll(async () => {
    directory = await scratchDir('prospect-input-');
  });

  it('joins arguments as lines and marks them as a plain list', async () => {
    expect(await readInputText({ args: ['acme.com', 'foo.com'] })).toEqual({
      text: 'acme.com\nfoo.com',
      origin: 'the command line',
      format: 'lines',
    });
  });

  it('reads a file', async () => {
    const path = join(directory, 'domains.txt');
    await writeFile(path, 'acme.com\n');
    expect(await readInputText({ file: path })).toEqual({ text: 'acme.com\n', origin: path });
  });

  it('reads standard input, for `-` too, without splitting multi-byte characters', async () => {
    const bytes = Buffer.from('bücher.de\n');
    const chunks = () => Readable.from([bytes.subarray(0, 2), bytes.subarray(2)]);
    expect(await readInputText({ stdin: chunks() })).toEqual({ text: 'bücher.de\n', origin: 'standard input' });
    expect(await readInputText({ file: '-', stdin: chunks() })).toMatchObject({ text: 'bücher.de\n' });
  });

  it('decodes a large read in pieces without splitting a character at a piece boundary', async () => {
    // 'ü' is two bytes and 'ş' two, '€' three: each starts one byte before a 32 KiB boundary inside a 256 KiB read.
    const pieces = [
      'a'.repeat(32 * 1024 - 1),
      'ü',
      'b'.repeat(32 * 1024 - 2),
      'ş',
      'c'.repeat(32 * 1024 - 3),
      '€',
      'd'.repeat(100_000),
    ];
    const text = pieces.join('');
    const bytes = Buffer.from(text);
    expect(bytes.length).toBeGreaterThan(3 * 32 * 1024);
    const path = join(directory, 'large.txt');
    await writeFile(path, bytes);
    expect(await readInputText({ stdin: Readable.from([bytes]) })).toEqual({ text, origin: 'standard input' });
    expect(await readInputText({ file: path })).toEqual({ text, origin: path });
  });

  it('returns null when there is nothing to read (no pipe on a terminal)', async () => {
    const terminal = Object.assign(Readable.from([]), { isTTY: true });
    expect(await readInputText({ stdin: terminal })).toBeNull();
    expect(await readInputText({})).toBeNull();
  });

  it('refuses arguments and a file together, and unreadable files, as usage errors', async () => {
    await expect(readInputText({ args: ['acme.com'], file: 'x.txt' })).rejects.toBeInstanceOf(UsageError);
    await expect(readInputText({ file: join(directory, 'missing.txt') })).rejects.toThrow(/missing\.txt: no such file/);
    await expect(readInputText({ file: directory })).rejects.toThrow(/it is a directory/);
  });
});
