/**
 * The npm package (issue 36): what `npm pack` puts in the tarball. No screenshots (the README links
 * them; 759 KB nobody running the CLI needs), and a size that a new heavy file would push past.
 * `--ignore-scripts`: the test reads the files as they are, it does not rebuild dist/ under other tests.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
/**
 * What a clean build ships, unpacked: 6.14 MB on 2026-12-02 (5.33 MB the day before: the lists of
 * disposable, webmail and role addresses bundled, and four new commands); room for growth, none for a
 * stray asset. Unpacked and counted file by file, because the bundle keeps a previous build's chunks
 * for a while (scripts/bundle.mjs) and `--ignore-scripts` packs them too: those are left out here.
 */
const MAX_UNPACKED_BYTES = 7_000_000;

describe('npm pack', () => {
  it('ships no docs/screenshots, and stays under the size bound', async () => {
    const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
    const [pack] = JSON.parse(stdout) as Array<{ size: number; files: Array<{ path: string; size: number }> }>;
    const paths = pack!.files.map((file) => file.path);
    expect(paths.filter((path) => path.startsWith('docs/screenshots'))).toEqual([]);
    // What the package is for is still there.
    expect(paths).toEqual(expect.arrayContaining(['bin/prospect.js', 'README.md', 'docs/crm-import.md']));
    const built = new Set(
      Object.keys(JSON.parse(readFileSync(resolve(ROOT, 'dist/cli/modules.json'), 'utf8')) as object),
    );
    const shipped = pack!.files.filter(
      (file) => !file.path.startsWith('dist/cli/chunks/') || built.has(file.path.slice('dist/cli/'.length)),
    );
    expect(shipped.length).toBeGreaterThan(100);
    expect(shipped.reduce((sum, file) => sum + file.size, 0)).toBeLessThan(MAX_UNPACKED_BYTES);
  }, 60_000);
});
