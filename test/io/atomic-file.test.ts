import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openAtomicFile, writeFileAtomic } from '../../src/io/atomic-file.js';
import { scratchDir as scratch } from '../helpers/scratch.js';

describe('atomic files', () => {
  it('shows nothing at the target until commit, then the whole content', async () => {
    const dir = await scratch();
    const target = join(dir, 'out.csv');
    const file = await openAtomicFile(target);
    file.stream.write('a,b\n');
    expect(await readdir(dir)).toHaveLength(1);
    expect((await readdir(dir))[0]).not.toBe('out.csv');
    await file.commit();
    expect(await readdir(dir)).toEqual(['out.csv']);
    expect(await readFile(target, 'utf8')).toBe('a,b\n');
  });

  it('leaves the previous file untouched and no temp file when aborted', async () => {
    const dir = await scratch();
    const target = join(dir, 'out.csv');
    await writeFile(target, 'old\n');
    const file = await openAtomicFile(target);
    file.stream.write('half');
    await file.abort();
    expect(await readdir(dir)).toEqual(['out.csv']);
    expect(await readFile(target, 'utf8')).toBe('old\n');
  });

  it('leaves the previous target and no temp file when the final rename fails', async () => {
    const dir = await scratch();
    // A non-empty directory where the file should go: rename(2) refuses to replace it.
    const target = join(dir, 'out.csv');
    await mkdir(join(target, 'inside'), { recursive: true });
    const file = await openAtomicFile(target);
    file.stream.write('a,b\n');
    await expect(file.commit()).rejects.toMatchObject({ code: expect.stringMatching(/^(EISDIR|ENOTEMPTY|EEXIST)$/) });
    expect(await readdir(dir)).toEqual(['out.csv']);
    expect(await readdir(target)).toEqual(['inside']);
  });

  it('replaces small files whole', async () => {
    const dir = await scratch();
    const target = join(dir, 'state.json');
    await writeFileAtomic(target, '{"a":1}');
    await writeFileAtomic(target, '{"a":2}');
    expect(await readdir(dir)).toEqual(['state.json']);
    expect(await readFile(target, 'utf8')).toBe('{"a":2}');
  });
});
