/**
 * The npm package (issue 36): what `npm pack` puts in the tarball. No screenshots (the README links
 * them; 759 KB nobody running the CLI needs), and a size that a new heavy file would push past.
 * `--ignore-scripts`: the test reads the files as they are, it does not rebuild dist/ under other tests.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
/** The packed tarball measured 1.09 MB (gzip) when this was written; room for growth, none for a stray asset. */
const MAX_PACKED_BYTES = 1_500_000;

describe('npm pack', () => {
  it('ships no docs/screenshots, and stays under the size bound', async () => {
    const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
    const [pack] = JSON.parse(stdout) as Array<{ size: number; files: Array<{ path: string }> }>;
    const paths = pack!.files.map((file) => file.path);
    expect(paths.filter((path) => path.startsWith('docs/screenshots'))).toEqual([]);
    // What the package is for is still there.
    expect(paths).toEqual(expect.arrayContaining(['bin/prospect.js', 'README.md', 'docs/crm-import.md']));
    expect(pack!.size).toBeLessThan(MAX_PACKED_BYTES);
  }, 60_000);
});
