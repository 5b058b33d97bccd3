/**
 * runTempFile: the one way a run makes a temporary file (standard input spooled for --strict, the
 * rows a paying run keeps before it pays). The signal handler knows it, and the run's end removes it.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTempFile } from '../../src/io/run-temp-file.js';
import { removeOpenTempFilesSync } from '../../src/io/temp-files.js';

describe('runTempFile', () => {
  it('names a file of this run in the temp directory, closed and then removed when the run ends', async () => {
    const cleanups: Array<() => Promise<void>> = [];
    const events: string[] = [];
    const path = runTempFile(
      'rows',
      (task) => cleanups.push(task),
      async () => {
        events.push(existsSync(path) ? 'closed while there' : 'closed after removal');
      },
    );
    expect(dirname(path)).toBe(tmpdir());
    expect(path).toMatch(new RegExp(`/prospect-rows-${process.pid}-[0-9a-f-]{36}$`));
    writeFileSync(path, 'rows\n');
    expect(cleanups).toHaveLength(1);
    await cleanups[0]!();
    expect(events).toEqual(['closed while there']);
    expect(existsSync(path)).toBe(false);
  });

  it('is removed by the signal handler of a run cut short', () => {
    const path = runTempFile('input', () => {});
    writeFileSync(path, 'acme.com\n');
    const removed: string[] = [];
    removeOpenTempFilesSync((file) => {
      removed.push(file);
      rmSync(file, { force: true });
    });
    expect(removed).toContain(path);
    expect(existsSync(path)).toBe(false);
  });
});
