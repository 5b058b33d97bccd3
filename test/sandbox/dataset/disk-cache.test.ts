/**
 * The dataset kept on disk (issue 43: `--sandbox` no longer draws 50,000 companies on every command):
 * a second start reads what the first drew, exactly, and any damage or other build means a fresh draw.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { cachedColumns, type DatasetColumns } from '../../../src/sandbox/dataset/disk-cache.js';
import { generateDataset } from '../../../src/sandbox/dataset/index.js';
import { scratchDirSync } from '../../helpers/scratch.js';

const KEY = { companies: 600, seed: 7 };
const COLUMNS = [
  'domains',
  'companyNames',
  'rankBucket',
  'employee',
  'country',
  'industry',
  'flags',
  'contactCounts',
  'techOffsets',
  'techs',
  'postingOffsets',
  'postings',
] as const;

/** The columns of a fresh draw, read off a Dataset the cache never touched. */
function drawn(): DatasetColumns {
  const dataset = generateDataset(KEY);
  return Object.fromEntries(COLUMNS.map((name) => [name, dataset[name]])) as unknown as DatasetColumns;
}

function expectSameColumns(actual: DatasetColumns, expected: DatasetColumns): void {
  for (const name of COLUMNS) {
    expect([...actual[name]], name).toEqual([...expected[name]]);
    expect(actual[name].constructor, name).toBe(expected[name].constructor);
  }
}

describe('the dataset cache', () => {
  it('draws once: a second start reads every column back exactly, without building', () => {
    const dir = scratchDirSync();
    const first = vi.fn(drawn);
    expectSameColumns(cachedColumns(dir, KEY, first), drawn());
    expect(first).toHaveBeenCalledTimes(1);

    const second = vi.fn(drawn);
    expectSameColumns(cachedColumns(dir, KEY, second), drawn());
    expect(second).not.toHaveBeenCalled();
    expect(readdirSync(dir)).toHaveLength(1);
  });

  it('never serves another size or seed', () => {
    const dir = scratchDirSync();
    cachedColumns(dir, KEY, drawn);
    const other = { companies: 600, seed: 8 };
    const build = vi.fn(() => {
      const dataset = generateDataset(other);
      return Object.fromEntries(COLUMNS.map((name) => [name, dataset[name]])) as unknown as DatasetColumns;
    });
    cachedColumns(dir, other, build);
    expect(build).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['cut short', (bytes: Buffer) => bytes.subarray(0, bytes.length - 5)],
    ['longer', (bytes: Buffer) => Buffer.concat([bytes, Buffer.from('x')])],
    ['a header that is not JSON', (bytes: Buffer) => Buffer.concat([Buffer.from('{'), bytes])],
    [
      'another fingerprint',
      (bytes: Buffer) =>
        Buffer.from(bytes.toString('latin1').replace(/"fingerprint":"./, '"fingerprint":"!'), 'latin1'),
    ],
    ['empty', () => Buffer.alloc(0)],
  ])('draws again when the file is %s, and writes a good one', (_, damage) => {
    const dir = scratchDirSync();
    cachedColumns(dir, KEY, drawn);
    const [name] = readdirSync(dir);
    const file = join(dir, name as string);
    writeFileSync(file, damage(readFileSync(file)));

    const rebuild = vi.fn(drawn);
    expectSameColumns(cachedColumns(dir, KEY, rebuild), drawn());
    expect(rebuild).toHaveBeenCalledTimes(1);
    const again = vi.fn(drawn);
    cachedColumns(dir, KEY, again);
    expect(again).not.toHaveBeenCalled();
  });

  it('still builds when the directory cannot be written', () => {
    const dir = join(scratchDirSync(), 'file');
    writeFileSync(dir, 'not a directory');
    const build = vi.fn(drawn);
    expectSameColumns(cachedColumns(dir, KEY, build), drawn());
    expect(build).toHaveBeenCalledTimes(1);
  });
});
