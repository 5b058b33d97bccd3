/**
 * A name planted where prospect would make a temp file (issue 41.7): a directory, a symlink or a file
 * at the very name is skipped for another, and left as it is; a planted name the sweep of orphaned
 * temp files cannot remove is left too. Never fatal (it used to make every run exit 1). The random
 * part of the name is fixed for the first try (node:crypto mocked), so the plant is where prospect looks.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  chownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { scratchDirSync } from '../helpers/scratch.js';

vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  return { ...real, randomBytes: vi.fn(real.randomBytes), randomUUID: vi.fn(real.randomUUID) };
});

type AtomicFiles = typeof import('../../src/io/atomic-file.js');
let copyFileAtomic: AtomicFiles['copyFileAtomic'];
let openAtomicFile: AtomicFiles['openAtomicFile'];
let writeFileAtomic: AtomicFiles['writeFileAtomic'];
let runTempFile: (typeof import('../../src/io/run-temp-file.js'))['runTempFile'];

// The suite's files share a worker (isolate: false), and another file may have loaded these modules
// with the real node:crypto already: they are loaded afresh here, so they see the mock.
beforeAll(async () => {
  vi.resetModules();
  ({ copyFileAtomic, openAtomicFile, writeFileAtomic } = await import('../../src/io/atomic-file.js'));
  ({ runTempFile } = await import('../../src/io/run-temp-file.js'));
});

const FIXED = 'deadbeef';
const IS_ROOT = process.geteuid?.() === 0;

afterEach(() => {
  vi.mocked(randomBytes).mockReset();
  vi.mocked(randomUUID).mockReset();
});

/** The kinds of plant, each made at `path`; `check` shows it was left as it was. */
function plants(outside: string) {
  return {
    directory: (path: string) => mkdirSync(path),
    symlink: (path: string) => symlinkSync(outside, path),
    file: (path: string) => writeFileSync(path, 'planted'),
  };
}

describe.each(['directory', 'symlink', 'file'] as const)('a %s planted at the temp name', (kind) => {
  const writers = {
    openAtomicFile: async (target: string) => {
      const file = await openAtomicFile(target);
      file.stream.write('new\n');
      await file.commit();
    },
    writeFileAtomic: (target: string) => writeFileAtomic(target, 'new\n'),
    copyFileAtomic: async (target: string) => {
      const source = join(scratchDirSync(), 'source');
      writeFileSync(source, 'new\n');
      await copyFileAtomic(source, target);
    },
  };

  it.for(Object.keys(writers) as Array<keyof typeof writers>)('%s takes another name and leaves it', async (writer) => {
    const dir = scratchDirSync();
    const outside = join(scratchDirSync(), 'victim');
    writeFileSync(outside, 'victim\n');
    const target = join(dir, 'out.csv');
    const planted = join(dir, `.out.csv.prospect-tmp-${process.pid}-${FIXED}`);
    plants(outside)[kind](planted);
    vi.mocked(randomBytes).mockImplementationOnce(() => Buffer.from(FIXED, 'hex'));
    await writers[writer](target);
    expect(readFileSync(target, 'utf8')).toBe('new\n');
    expect(readdirSync(dir).sort()).toEqual([`.out.csv.prospect-tmp-${process.pid}-${FIXED}`, 'out.csv']);
    expect(lstatSync(planted).isSymbolicLink()).toBe(kind === 'symlink');
    expect(readFileSync(outside, 'utf8')).toBe('victim\n');
    expect(vi.mocked(randomBytes)).toHaveBeenCalledTimes(2);
  });

  it('runTempFile takes another name and leaves it', () => {
    const outside = join(scratchDirSync(), 'victim');
    writeFileSync(outside, 'victim\n');
    const fixed = '00000000-0000-4000-8000-000000000000';
    const planted = join(tmpdir(), `prospect-rows-${process.pid}-${fixed}`);
    plants(outside)[kind](planted);
    try {
      vi.mocked(randomUUID).mockImplementationOnce(() => fixed);
      const path = runTempFile('rows', () => {});
      expect(path).not.toBe(planted);
      expect(lstatSync(path).mode & 0o777).toBe(0o600);
      expect(lstatSync(planted).isSymbolicLink()).toBe(kind === 'symlink');
      expect(readFileSync(outside, 'utf8')).toBe('victim\n');
    } finally {
      // A plant in the shared temp directory goes with the test.
      rmSync(planted, { recursive: true, force: true });
    }
  });
});

describe('the sweep of orphaned temp files', () => {
  it('leaves a planted name of a dead pid it cannot remove (a directory, another user’s file)', async () => {
    const dir = scratchDirSync();
    const target = join(dir, 'out.csv');
    const deadDirectory = `.out.csv.prospect-tmp-999999999-0badf00d`;
    mkdirSync(join(dir, deadDirectory));
    writeFileSync(join(dir, deadDirectory, 'inside'), 'x');
    const deadFile = `.out.csv.prospect-tmp-999999998-0badf00d`;
    writeFileSync(join(dir, deadFile), 'orphan');
    if (IS_ROOT) chownSync(join(dir, deadFile), 65534, 65534);
    await writeFileAtomic(target, 'new\n');
    expect(readFileSync(target, 'utf8')).toBe('new\n');
    // The directory is not a temp file of prospect's; an orphaned file is still swept.
    expect(readdirSync(dir).sort()).toEqual([deadDirectory, 'out.csv']);
  });
});
