/**
 * A temporary file of the run, in the system temp directory: tracked so a signal handler removes it
 * (temp-files.ts), and removed when the run ends, after `close` for a file the caller holds open.
 */
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trackTempFile, untrackTempFile } from './temp-files.js';

export function runTempFile(
  kind: string,
  onCleanup: (task: () => Promise<void>) => void,
  close: () => Promise<void> = async () => {},
): string {
  const path = join(tmpdir(), `prospect-${kind}-${process.pid}-${randomUUID()}`);
  trackTempFile(path);
  onCleanup(async () => {
    await close().catch(() => {});
    untrackTempFile(path);
    await rm(path, { force: true });
  });
  return path;
}
