import type { Column } from '../../src/io/columns.js';
import type { TextSink } from '../../src/io/sink.js';
import { createRowWriter } from '../../src/io/writers.js';

/** Rows of strings through prospect's own CSV writer, columns c0…cN, as a string. */
export async function renderCsv(rows: string[][], width: number, escapeFormulas: boolean): Promise<string> {
  const columns: Column<string[]>[] = Array.from({ length: width }, (_, index) => ({ name: `c${index}`, get: (row) => row[index] }));
  const chunks: string[] = [];
  const sink: TextSink = { write: async (text) => void chunks.push(text) };
  const writer = await createRowWriter<string[]>('csv', sink, { columns, toJson: (row) => row, escapeFormulas });
  await writer.writeRows(rows);
  await writer.finish();
  return chunks.join('');
}
