import { describe, expect, it } from 'vitest';
import {
  mergeWalks,
  START,
  type MergeSource,
  type WalkPage,
  type WalkPosition,
} from '../../../src/core/companies/merge.js';

/** A walk over sorted numbers in pages of `size`; cursors are page indices as text. */
function source(values: number[], size: number, start: WalkPosition = START): MergeSource<number> {
  const pages: Array<WalkPage<number>> = [];
  for (let i = 0; i < values.length; i += size) {
    pages.push({
      rows: values.slice(i, i + size),
      cursor: i === 0 ? null : String(i / size),
      nextCursor: i + size < values.length ? String(i / size + 1) : null,
    });
  }
  const from = start.cursor === null ? 0 : Number(start.cursor);
  async function* walk() {
    if (start.done) return;
    yield* pages.slice(from);
  }
  return { pages: walk(), start };
}

const byValue = (a: number, b: number) => a - b;

async function collect(sources: Array<MergeSource<number>>) {
  const chunks = [];
  for await (const chunk of mergeWalks(sources, byValue, 'numbers')) chunks.push(chunk);
  return chunks;
}

describe('mergeWalks', () => {
  const a = [1, 4, 5, 9, 12, 20];
  const b = [2, 4, 6, 7, 20, 21, 22];
  const c = [3];

  it('gives the sorted union, each value once, however the walks are paged', async () => {
    for (const size of [1, 2, 3, 10]) {
      const chunks = await collect([source(a, size), source(b, size), source(c, size)]);
      expect(chunks.flatMap((chunk) => chunk.rows)).toEqual([1, 2, 3, 4, 5, 6, 7, 9, 12, 20, 21, 22]);
      expect(chunks.at(-1)!.last).toBe(true);
      expect(chunks.slice(0, -1).every((chunk) => !chunk.last)).toBe(true);
    }
  });

  it('hands out one walk page by page, without relying on its order', async () => {
    const chunks = await collect([source([3, 1, 2, 0], 2)]);
    expect(chunks.map((chunk) => chunk.rows)).toEqual([
      [3, 1],
      [2, 0],
    ]);
  });

  it('resumes from any chunk’s positions with exactly the rows that follow it', async () => {
    const whole = (await collect([source(a, 2), source(b, 3)])).flatMap((chunk) => chunk.rows);
    const chunks = await collect([source(a, 2), source(b, 3)]);
    let before = 0;
    for (const chunk of chunks.slice(0, -1)) {
      before += chunk.rows.length;
      const [pa, pb] = chunk.positions as [WalkPosition, WalkPosition];
      const rest = (await collect([source(a, 2, pa), source(b, 3, pb)])).flatMap((resumed) => resumed.rows);
      expect([...whole.slice(0, before), ...rest]).toEqual(whole);
    }
  });

  it('refuses walks that are out of order rather than merge them wrongly', async () => {
    await expect(collect([source([1, 3, 2], 5), source([2], 5)])).rejects.toThrow(/out of its documented order/);
  });
});
