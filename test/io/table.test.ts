/**
 * The table for people: one header, widths set once, fitted to the width it is given, cut in the
 * documented order, wide characters (CJK, emoji) aligned as cli-table3 measures them.
 */
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import type { Column } from '../../src/io/columns.js';
import type { TextSink } from '../../src/io/sink.js';
import { FILE_TABLE_WIDTH, tableWriter } from '../../src/io/table.js';
import { FIRST_FLOOR, frameWidth, planLayout } from '../../src/io/table-layout.js';

type Row = Record<string, string>;

function columnsOf(names: string[]): Column<Row>[] {
  return names.map((name) => ({ name, get: (row: Row) => row[name] ?? null }));
}

function collectingSink(terminal?: { columns: number; rows: number }): TextSink & { text: () => string } {
  let text = '';
  return {
    async write(chunk) {
      text += chunk;
    },
    ...(terminal ? { terminalSize: () => terminal } : {}),
    text: () => text,
  };
}

const NAMES = ['domain', 'company_name', 'title', 'technologies', 'country'];
const row = (index: number, extra: Partial<Row> = {}): Row => ({
  domain: `shop-number-${index}.example.com`,
  company_name: `The Very Long Company Name Number ${index}`,
  title: 'Senior Vice President of Worldwide Operations',
  technologies: 'Shopify;Klaviyo;Google Analytics;Hotjar;Stripe;Zendesk;Intercom',
  country: 'united states',
  ...extra,
});

async function draw(rows: Row[], terminal?: { columns: number; rows: number }, batch = 7): Promise<string[]> {
  const sink = collectingSink(terminal);
  const writer = tableWriter(sink, { columns: columnsOf(NAMES), toJson: (value) => value, escapeFormulas: false });
  for (let start = 0; start < rows.length; start += batch) await writer.writeRows(rows.slice(start, start + batch));
  await writer.finish();
  return sink.text().trimEnd().split('\n');
}

describe('tableWriter', () => {
  it('draws one table for many batches: one header, one top and one bottom border, every line as wide', async () => {
    const lines = await draw(
      Array.from({ length: 40 }, (_, index) => row(index)),
      { columns: 200, rows: 10 },
    );
    expect(lines.filter((line) => line.includes('│ domain'))).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith('┌'))).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith('└'))).toHaveLength(1);
    expect(lines).toHaveLength(40 + 3);
    expect(new Set(lines.map((line) => stringWidth(line))).size).toBe(1);
  });

  it.each([40, 80, 120])('fits a terminal of %i columns', async (columns) => {
    const lines = await draw(
      Array.from({ length: 12 }, (_, index) => row(index)),
      { columns, rows: 24 },
    );
    for (const line of lines) expect(stringWidth(line), line).toBeLessThanOrEqual(columns);
  });

  it(`into a file or a pipe is at most ${FILE_TABLE_WIDTH} columns wide`, async () => {
    const wide = row(1, { technologies: 'x'.repeat(400), title: 'y'.repeat(400), company_name: 'z'.repeat(400) });
    const lines = await draw([wide, row(2)]);
    for (const line of lines) expect(stringWidth(line)).toBeLessThanOrEqual(FILE_TABLE_WIDTH);
  });

  it('keeps CJK and emoji cells aligned with the frame', async () => {
    const rows = [
      row(1, { company_name: '株式会社東京ショップ', country: '日本' }),
      row(2, { company_name: 'Café 🚀 Rocket', country: 'france' }),
      row(3),
    ];
    for (const columns of [80, 200]) {
      const lines = await draw(rows, { columns, rows: 24 });
      expect(new Set(lines.map((line) => stringWidth(line))).size, lines.join('\n')).toBe(1);
    }
  });

  it('sets the widths from the first screenful: a longer cell later is cut, not a wider table', async () => {
    const rows = [
      ...Array.from({ length: 10 }, (_, index) => row(index, { country: 'peru' })),
      row(99, { country: 'the united kingdom of great britain' }),
    ];
    const lines = await draw(rows, { columns: 200, rows: 8 }, 1);
    expect(new Set(lines.map((line) => stringWidth(line))).size).toBe(1);
    expect(lines.find((line) => line.includes('shop-number-99'))).toMatch(/│ the un… │$/);
  });

  it('writes "(no rows)" for an empty result', async () => {
    expect(await draw([], { columns: 80, rows: 24 })).toEqual(['(no rows)']);
  });
});

describe('planLayout: the cut order', () => {
  const sample = [NAMES.map((name) => row(1)[name]!)];
  const natural = planLayout(NAMES, sample, 1000).widths;

  it('leaves a table that fits alone', () => {
    expect(planLayout(NAMES, sample, 1000)).toEqual({ shown: [0, 1, 2, 3, 4], widths: natural, omitted: [] });
  });

  it('cuts technologies first, then titles, then names, before anything else', () => {
    const total = (widths: number[]) => widths.reduce((sum, width) => sum + width, 0) + frameWidth(widths.length);
    const justTechnologies = planLayout(NAMES, sample, total(natural) - 10).widths;
    expect(justTechnologies).toEqual([natural[0], natural[1], natural[2], natural[3]! - 10, natural[4]]);
    const alsoTitle = planLayout(NAMES, sample, total(natural) - (natural[3]! - FIRST_FLOOR) - 5).widths;
    expect(alsoTitle).toEqual([natural[0], natural[1], natural[2]! - 5, FIRST_FLOOR, natural[4]]);
  });

  it('cuts the domain last, and leaves whole columns out only when nothing else fits', () => {
    const narrow = planLayout(NAMES, sample, 50);
    expect(narrow.widths.reduce((sum, width) => sum + width, 0) + frameWidth(narrow.shown.length)).toBeLessThanOrEqual(
      50,
    );
    expect(narrow.shown).toContain(0);
    const tiny = planLayout(NAMES, sample, 30);
    expect(tiny.omitted[0]).toBe('technologies');
    expect(tiny.shown[0]).toBe(0);
  });
});

describe('planLayout: the extras of a wide terminal', () => {
  it('are added only while names and titles keep their width: a LinkedIn URL does not cut the name at 200', () => {
    const names = [
      'business_email',
      'full_name',
      'domain',
      'title',
      'seniority',
      'email_freshness',
      'department',
      'linkedin_url',
    ];
    const sample = [
      [
        'christopher.collins@kanimzeexdigital.co.uk',
        'Christopher Collins',
        'kanimzeexdigital.co.uk',
        'Sales Development Representative',
        'staff',
        'stale',
        'sales',
        'https://www.linkedin.com/in/christopher-collins-123456',
      ],
    ];
    const optional = names.map((name) => name === 'department' || name === 'linkedin_url');
    const layout = planLayout(names, sample, 200, optional);
    const shown = layout.shown.map((index) => names[index]);
    const widthOf = (name: string) => layout.widths[shown.indexOf(name)];
    // The URL fits only by cutting the title to 14 and the name to 15: it is left out, the department is not.
    expect(shown).toEqual(names.slice(0, 7));
    expect(widthOf('full_name')).toBe('Christopher Collins'.length);
    expect(widthOf('title')).toBe('Sales Development Representative'.length);
  });
});

describe('a contacts table a rep can read (issue 36)', () => {
  const CONTACT_NAMES = [
    'domain',
    'full_name',
    'title',
    'seniority',
    'business_email',
    'email_freshness',
    'verification',
  ];
  const EXTRAS = ['industry', 'phone', 'technologies'];
  const person = (index: number): Row => ({
    domain: `northwind-${index}.com`,
    full_name: `Alexandra Montgomery-Smith ${index}`,
    title: 'Senior Vice President of Worldwide Operations',
    seniority: 'vp',
    // 40 characters: the longest address the promise covers.
    business_email: `alexandra.montgomery${String(index).padStart(2, '0')}@northwind-tra.com`,
    email_freshness: 'fresh',
    verification: '',
    industry: 'wholesale distribution',
    phone: '+1 206 555 0100',
    technologies: 'Shopify;Klaviyo;Google Analytics;Hotjar;Stripe',
  });
  const rows = Array.from({ length: 12 }, (_, index) => person(index));

  async function drawContacts(columns: number): Promise<{ lines: string[]; header: string[]; cells: string[][] }> {
    const sink = collectingSink({ columns, rows: 40 });
    const all = [
      ...columnsOf(CONTACT_NAMES),
      ...columnsOf(EXTRAS).map((column) => ({ ...column, tableOptional: true })),
    ];
    const writer = tableWriter(sink, { columns: all, toJson: (value) => value, escapeFormulas: false });
    await writer.writeRows(rows);
    await writer.finish();
    const lines = sink.text().trimEnd().split('\n');
    const split = (line: string) =>
      line
        .split('│')
        .slice(1, -1)
        .map((cell) => cell.trim());
    const framed = lines.filter((line) => line.startsWith('│'));
    return { lines, header: split(framed[0]!), cells: framed.slice(1).map(split) };
  }

  it.each([60, 80, 120, 200])(
    'at %i columns: the full email and the name first, no empty column, no line wider',
    async (columns) => {
      const { lines, header, cells } = await drawContacts(columns);
      expect(rows[0]!.business_email).toHaveLength(40);
      expect(header.slice(0, 2)).toEqual(['business_email', 'full_name']);
      expect(cells.map((row) => row[0])).toEqual(rows.map((row) => row.business_email));
      expect(header).not.toContain('verification');
      for (const [index] of header.entries())
        expect(
          cells.some((row) => row[index] !== ''),
          header[index],
        ).toBe(true);
      for (const line of lines) expect(stringWidth(line), line).toBeLessThanOrEqual(columns);
    },
  );

  it('a wide terminal shows more columns: industry and phone at 200, none at 80', async () => {
    const wide = await drawContacts(200);
    expect(wide.header).toEqual(expect.arrayContaining(['industry', 'phone', 'domain', 'title']));
    const narrow = await drawContacts(80);
    expect(narrow.header.filter((name) => EXTRAS.includes(name))).toEqual([]);
    // A column that did not fit is said under the table; an extra without room is not "left out".
    const note = narrow.lines.slice(narrow.lines.findIndex((line) => line.startsWith('└')) + 1).join(' ');
    expect(note).toMatch(/left out to fit 80 columns: .*Choose columns with --columns\.$/);
    expect(note).not.toMatch(/industry|phone|technologies/);
  });
});
