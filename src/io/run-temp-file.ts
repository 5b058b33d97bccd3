/**
 * A temporary file of the run, in the system temp directory: tracked so a signal handler removes it
 * (temp-files.ts), and removed when the run ends, after `close` for a file the caller holds open.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trackTempFile, untrackTempFile } from './temp-files.js';

/** Names tried before giving up: each is random, so one taken is already a plant. */
const NAME_TRIES = 8;

/**
 * The path of a new empty file (mode 0600), made here exclusively: a name someone planted in the
 * shared temp directory (a file, a directory, a symlink) is skipped for another, never followed.
 */
export function runTempFile(
  kind: string,
  onCleanup: (task: () => Promise<void>) => void,
  close: () => Promise<void> = async () => {},
): string {
  const path = createExclusively(kind);
  trackTempFile(path);
  onCleanup(async () => {
    await close().catch(() => {});
    untrackTempFile(path);
    await rm(path, { force: true });
  });
  return path;
}

function createExclusively(kind: string): string {
  for (let tries = 1; ; tries++) {
    const path = join(tmpdir(), `prospect-${kind}-${process.pid}-${randomUUID()}`);
    try {
      closeSync(openSync(path, 'wx', 0o600));
      return path;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || tries === NAME_TRIES) throw error;
    }
  }
}
