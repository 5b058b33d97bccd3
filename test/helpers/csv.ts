/**
 * CSV (and NDJSON) for tests: prospect's writer through its public interface (createRowWriter), and readers
 * that are not prospect's: csv-parse, and Python's csv module as an oracle written apart from both.
 */
import { spawnSync } from 'node:child_process';
import { parse } from 'csv-parse/sync';
import type { Column } from '../../src/io/columns.js';
import type { TextSink } from '../../src/io/sink.js';
import { createRowWriter } from '../../src/io/writers.js';
import { findProgram } from './programs.js';

/** Rows of strings through prospect's own CSV writer, as a string: columns named by `header`, or c0…cN for a width. */
export async function renderCsv(rows: string[][], header: string[] | number, escapeFormulas: boolean): Promise<string> {
  const names = typeof header === 'number' ? Array.from({ length: header }, (_, index) => `c${index}`) : header;
  const columns: Column<string[]>[] = names.map((name, index) => ({ name, get: (row) => row[index] }));
  const chunks: string[] = [];
  const sink: TextSink = { write: async (text) => void chunks.push(String(text)) };
  const writer = await createRowWriter<string[]>('csv', sink, { columns, toJson: (row) => row, escapeFormulas });
  await writer.writeRows(rows);
  await writer.finish();
  return chunks.join('');
}

/** A CSV document with a header row as records, read by csv-parse (a BOM is allowed). */
export function csvRecords(text: string): Record<string, string>[] {
  return parse(text, { columns: true, bom: true }) as Record<string, string>[];
}

/** The records of an NDJSON document (one JSON value a line), read by JSON.parse. */
export const ndjsonRecords = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

/** Every row of a CSV document, the header included, as arrays of cells, read by csv-parse. */
export function csvRows(text: string): string[][] {
  return parse(text, { bom: true }) as string[][];
}

/**
 * CSV documents read by Python's csv module (strict, RFC 4180 dialect): each document's rows, header
 * included. One python3 process for the whole batch.
 */
export function pythonCsvRows(documents: string[]): string[][][] {
  const script = [
    'import csv, io, json, sys',
    'docs = json.load(sys.stdin)',
    'out = [list(csv.reader(io.StringIO(doc, newline=""), strict=True)) for doc in docs]',
    'json.dump(out, sys.stdout)',
  ].join('\n');
  const result = spawnSync(findProgram('python3').command, ['-c', script], {
    input: JSON.stringify(documents),
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (result.status !== 0)
    throw new Error(`python3's csv module refused the documents: ${result.stderr || result.error}`);
  return JSON.parse(result.stdout) as string[][][];
}
