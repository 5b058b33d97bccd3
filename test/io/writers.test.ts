import { describe, expect, it } from 'vitest';
import type { Column } from '../../src/io/columns.js';
import { selectColumns } from '../../src/io/columns.js';
import type { TextSink } from '../../src/io/sink.js';
import { createRowWriter, type OutputFormat } from '../../src/io/writers.js';
import { csvRecords } from '../helpers/csv.js';

interface Row {
  name: string;
  count: number | null;
  tags: string[];
}

const COLUMNS: Column<Row>[] = [
  { name: 'name', get: (row) => row.name },
  { name: 'count', get: (row) => row.count },
  { name: 'tags', get: (row) => row.tags.join(';') },
];

function memorySink(): TextSink & { text: () => string } {
  const chunks: string[] = [];
  return { write: async (chunk) => void chunks.push(String(chunk)), text: () => chunks.join('') };
}

async function render(format: OutputFormat, pages: Row[][], meta?: unknown, escapeFormulas = true): Promise<string> {
  const sink = memorySink();
  const writer = await createRowWriter<Row>(format, sink, { columns: COLUMNS, toJson: (row) => row, escapeFormulas });
  for (const page of pages) await writer.writeRows(page);
  await writer.finish(meta);
  return sink.text();
}

const ROWS: Row[] = [
  { name: 'Acme, Inc.', count: 3, tags: ['a', 'b'] },
  { name: 'Quote "Co"', count: null, tags: [] },
  { name: 'Line\nbreak', count: 0, tags: ['x'] },
];

describe('CSV writer', () => {
  it('writes a header and RFC 4180 quoting that a real parser reads back', async () => {
    const text = await render('csv', [ROWS.slice(0, 2), ROWS.slice(2)]);
    const records = csvRecords(text);
    expect(records).toEqual([
      { name: 'Acme, Inc.', count: '3', tags: 'a;b' },
      { name: 'Quote "Co"', count: '', tags: '' },
      { name: 'Line\nbreak', count: '0', tags: 'x' },
    ]);
  });

  it('writes the header alone for an empty result', async () => {
    expect(await render('csv', [])).toBe('name,count,tags\n');
  });

  it('writes nothing for empty pages until finish: a run that stops with no row leaves stdout empty', async () => {
    const sink = memorySink();
    const writer = await createRowWriter<Row>('csv', sink, {
      columns: COLUMNS,
      toJson: (row) => row,
      escapeFormulas: true,
    });
    await writer.writeRows([]);
    await writer.writeRows([]);
    expect(sink.text()).toBe('');
    await writer.writeRows(ROWS.slice(0, 1));
    expect(sink.text()).toBe('name,count,tags\n"Acme, Inc.",3,a;b\n');
  });

  it('neutralises formulas unless told not to', async () => {
    const evil: Row[] = [{ name: '=HYPERLINK("http://x")', count: -1, tags: ['@SUM(A1)'] }];
    const escaped = csvRecords(await render('csv', [evil]));
    expect(escaped[0]).toEqual({ name: `'=HYPERLINK("http://x")`, count: '-1', tags: `'@SUM(A1)` });
    const raw = csvRecords(await render('csv', [evil], undefined, false));
    expect(raw[0]!.name).toBe('=HYPERLINK("http://x")');
  });
});

describe("CSV cells (csv-stringify with prospect's options)", () => {
  interface Cells {
    text: string;
    flag: boolean | null;
    amount: number;
  }
  const CELLS: Column<Cells>[] = [
    { name: 'text', get: (row) => row.text },
    { name: 'flag', get: (row) => row.flag },
    { name: 'amount', get: (row) => row.amount },
  ];
  async function csv(rows: Cells[], escapeFormulas = true): Promise<string> {
    const sink = memorySink();
    const writer = await createRowWriter<Cells>('csv', sink, { columns: CELLS, toJson: (row) => row, escapeFormulas });
    await writer.writeRows(rows);
    await writer.finish();
    return sink.text();
  }

  it('writes literal bytes: LF records, quotes only where needed, booleans as words, negative numbers unguarded', async () => {
    expect(
      await csv([
        { text: 'plain', flag: true, amount: -3 },
        { text: 'a,b', flag: false, amount: 0.5 },
        { text: '', flag: null, amount: 7 },
      ]),
    ).toBe('text,flag,amount\nplain,true,-3\n"a,b",false,0.5\n,,7\n');
  });

  it('quotes a bare carriage return, white space at either end, quotes and line feeds', async () => {
    expect(await csv([{ text: 'a\rb', flag: null, amount: 1 }])).toBe('text,flag,amount\n"a\rb",,1\n');
    expect(await csv([{ text: ' lead', flag: null, amount: 1 }])).toBe('text,flag,amount\n" lead",,1\n');
    expect(await csv([{ text: 'trail\t', flag: null, amount: 1 }])).toBe('text,flag,amount\n"trail\t",,1\n');
    expect(await csv([{ text: 'say "hi"\nbye', flag: null, amount: 1 }])).toBe(
      'text,flag,amount\n"say ""hi""\nbye",,1\n',
    );
  });

  it("guards a leading line feed, which csv-stringify's own escape_formulas misses", async () => {
    expect(await csv([{ text: '\n=1+1', flag: null, amount: 1 }])).toBe('text,flag,amount\n"\'\n=1+1",,1\n');
    expect(await csv([{ text: '\n=1+1', flag: null, amount: 1 }], false)).toBe('text,flag,amount\n"\n=1+1",,1\n');
  });
});

describe('JSON and NDJSON writers', () => {
  it('streams a JSON document with data first and meta last', async () => {
    const text = await render('json', [ROWS.slice(0, 1), ROWS.slice(1)], { source: { dataset: 'd' } });
    expect(JSON.parse(text)).toEqual({ data: ROWS, meta: { source: { dataset: 'd' } } });
  });

  it('writes a valid empty JSON document', async () => {
    expect(JSON.parse(await render('json', [], { scope: 's' }))).toEqual({ data: [], meta: { scope: 's' } });
  });

  it('writes one JSON object per line', async () => {
    const lines = (await render('ndjson', [ROWS])).trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line))).toEqual(ROWS);
  });
});

describe('a large page', () => {
  // More rows than one written piece holds (writers.ts ROWS_PER_PIECE), with a count that is not a multiple of it.
  const many: Row[] = Array.from({ length: 101 }, (_, i) => ({
    name: `Company ${i}`,
    count: i,
    tags: i % 2 === 0 ? ['a'] : [],
  }));

  it('writes the same text whether the rows come as one page or one at a time', async () => {
    for (const format of ['csv', 'json', 'ndjson'] as const) {
      expect(await render(format, [many], { scope: 's' })).toBe(
        await render(
          format,
          many.map((row) => [row]),
          { scope: 's' },
        ),
      );
    }
  });

  it('keeps every row, in order', async () => {
    expect(
      (await render('ndjson', [many]))
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line).name),
    ).toEqual(many.map((row) => row.name));
    expect(csvRecords(await render('csv', [many])).map((record) => record['name'])).toEqual(
      many.map((row) => row.name),
    );
    expect(JSON.parse(await render('json', [many])).data).toEqual(many);
  });
});

describe('table writer', () => {
  it('renders a header once and every row', async () => {
    const text = await render('table', [ROWS.slice(0, 1), ROWS.slice(1)]);
    expect(text.match(/name/g)).toHaveLength(1);
    expect(text).toContain('Acme, Inc.');
    expect(text).toContain('Line break');
  });
});

describe('--columns', () => {
  it('keeps the named columns in the given order', () => {
    expect(selectColumns(COLUMNS, 'tags, name').map((column) => column.name)).toEqual(['tags', 'name']);
  });
  it('names the valid columns when one is unknown', () => {
    expect(() => selectColumns(COLUMNS, 'name,nope')).toThrow(/unknown column "nope"/);
  });
});
