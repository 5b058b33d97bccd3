/**
 * The .xlsx writer (src/io/xlsx.ts) through prospect's writer interface, read back by exceljs' own
 * reader for the sheet's structure (types, bold frozen header, autofilter, widths, the About sheet).
 * Whether a real spreadsheet reads the same values is test/io/crm-output.cli.test.ts (LibreOffice).
 */
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import type { Column } from '../../src/io/columns.js';
import { exitCodeOf } from '../../src/exit-codes.js';
import { resolveFormat } from '../../src/io/output.js';
import type { TextSink } from '../../src/io/sink.js';
import { xlsxWriter } from '../../src/io/xlsx.js';

interface Row {
  name: string;
  rank: number | null;
  flag: boolean;
}
const COLUMNS: Column<Row>[] = [
  { name: 'name', get: (row) => row.name },
  { name: 'rank', get: (row) => row.rank },
  { name: 'flag', get: (row) => row.flag },
];

function bytesSink(): TextSink & { bytes: () => Buffer; writes: () => number } {
  const chunks: Buffer[] = [];
  return {
    write: async (chunk) => void chunks.push(Buffer.from(chunk)),
    bytes: () => Buffer.concat(chunks),
    writes: () => chunks.length,
  };
}

async function workbookOf(rows: Row[][], meta: unknown, limits = { maxDataRows: 1_048_575, widthSampleRows: 1_000 }) {
  const sink = bytesSink();
  const writer = xlsxWriter(sink, { columns: COLUMNS, toJson: (row) => row, escapeFormulas: true }, limits);
  for (const batch of rows) await writer.writeRows(batch);
  await writer.finish(meta);
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(sink.bytes() as unknown as ArrayBuffer);
  return workbook;
}

describe('xlsx writer', () => {
  it('writes text and numbers only: formula-looking text stays text, a boolean reads as in CSV', async () => {
    const workbook = await workbookOf(
      [
        [
          { name: '=1+1', rank: 42, flag: true },
          { name: '@SUM(1,1)', rank: null, flag: false },
        ],
      ],
      undefined,
    );
    const sheet = workbook.getWorksheet('List')!;
    expect(sheet.getRow(1).values).toEqual([undefined, 'name', 'rank', 'flag']);
    expect(sheet.getCell('A2').type).toBe(ExcelJS.ValueType.String);
    expect(sheet.getCell('A2').value).toBe('=1+1');
    expect(sheet.getCell('A3').value).toBe('@SUM(1,1)');
    expect(sheet.getCell('B2').type).toBe(ExcelJS.ValueType.Number);
    expect(sheet.getCell('B2').value).toBe(42);
    expect(sheet.getCell('B3').value).toBeNull();
    expect([sheet.getCell('C2').value, sheet.getCell('C3').value]).toEqual(['true', 'false']);
  });

  it('has a bold frozen header row, an autofilter over every row, and widths from the first rows', async () => {
    const long = 'x'.repeat(40);
    const workbook = await workbookOf(
      [
        [
          { name: 'short', rank: 1, flag: true },
          { name: 'a bit longer', rank: 2, flag: true },
        ],
        [{ name: long, rank: 3, flag: true }],
      ],
      undefined,
      {
        maxDataRows: 1_048_575,
        widthSampleRows: 2,
      },
    );
    const sheet = workbook.getWorksheet('List')!;
    expect(sheet.getRow(1).font?.bold).toBe(true);
    expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    expect(sheet.autoFilter).toBe('A1:C4');
    // Sampled on the first two rows: "a bit longer" (12) + 2; the 40-character third row came later.
    expect(sheet.getColumn(1).width).toBe(14);
    expect(sheet.getCell('A4').value).toBe(long);
  });

  it('puts the provenance on "About this list", one field a row', async () => {
    const meta = { source: { dataset: 'Web technology crawl', history_since: '2019' }, total: 2834, scope: '-all' };
    const workbook = await workbookOf([[{ name: 'a', rank: 1, flag: true }]], meta);
    const about = workbook.getWorksheet('About this list')!;
    const fields = about
      .getSheetValues()
      .slice(1)
      .map((values) => (values as unknown[]).slice(1));
    expect(fields).toEqual([
      ['field', 'value'],
      ['rows', 1],
      ['source.dataset', 'Web technology crawl'],
      ['source.history_since', '2019'],
      ['total', 2834],
      ['scope', '-all'],
    ]);
  });

  it("refuses a row past Excel's limit before writing it: exit 2, use CSV", async () => {
    const sink = bytesSink();
    const writer = xlsxWriter(
      sink,
      { columns: COLUMNS, toJson: (row) => row, escapeFormulas: true },
      { maxDataRows: 3, widthSampleRows: 1_000 },
    );
    await writer.writeRows([
      { name: 'a', rank: 1, flag: true },
      { name: 'b', rank: 2, flag: true },
    ]);
    const refused = await writer
      .writeRows([
        { name: 'c', rank: 3, flag: true },
        { name: 'd', rank: 4, flag: true },
      ])
      .catch((error: unknown) => error);
    expect(String(refused)).toMatch(/more than 3 rows, more than an Excel sheet holds/);
    expect((refused as { hint?: string }).hint).toMatch(/CSV/);
    expect(exitCodeOf(refused)).toBe(2);
  });

  it('streams: rows past the width sample reach the output while they are written, not at finish', async () => {
    const sink = bytesSink();
    const writer = xlsxWriter(
      sink,
      { columns: COLUMNS, toJson: (row) => row, escapeFormulas: true },
      { maxDataRows: 1_048_575, widthSampleRows: 100 },
    );
    const batch = Array.from({ length: 1_000 }, (_, index) => ({
      name: `company ${index} ${'x'.repeat(index % 50)}`,
      rank: index,
      flag: index % 2 === 0,
    }));
    const sizes: number[] = [];
    for (let round = 0; round < 20; round++) {
      await writer.writeRows(batch);
      sizes.push(sink.bytes().length);
    }
    await writer.finish(undefined);
    expect(sizes[19]).toBeGreaterThan(sizes[4]!);
    expect(sizes[19]).toBeGreaterThan(sink.bytes().length / 2);
  });

  it('accepts exactly the limit', async () => {
    const workbook = await workbookOf(
      [
        [
          { name: 'a', rank: 1, flag: true },
          { name: 'b', rank: 2, flag: true },
        ],
        [{ name: 'c', rank: 3, flag: true }],
      ],
      undefined,
      { maxDataRows: 3, widthSampleRows: 1 },
    );
    expect(workbook.getWorksheet('List')!.rowCount).toBe(4);
  });

  it('--format xlsx to a terminal is a usage error; to a pipe or a file it is not', () => {
    const refused = (() => {
      try {
        resolveFormat({ format: 'xlsx', stdoutIsTTY: true });
      } catch (error) {
        return error;
      }
    })();
    expect(exitCodeOf(refused)).toBe(2);
    expect(String(refused)).toMatch(/binary file/);
    expect(resolveFormat({ format: 'xlsx', stdoutIsTTY: false })).toBe('xlsx');
    expect(resolveFormat({ outputPath: 'list.XLSX', stdoutIsTTY: true })).toBe('xlsx');
  });
});
