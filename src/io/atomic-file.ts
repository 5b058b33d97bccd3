import { randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { basename, dirname, join } from 'node:path';
import { removeOpenTempFilesSync, trackTempFile, untrackTempFile } from './temp-files.js';

export { removeOpenTempFilesSync };

export function tempPathFor(target: string): string {
  const suffix = `${process.pid}-${randomBytes(4).toString('hex')}`;
  return join(dirname(target), `.${basename(target)}.prospect-tmp-${suffix}`);
}

export interface AtomicFile {
  readonly stream: WriteStream;
  readonly target: string;
  /** Flushes, closes and renames the temp file over the target. */
  commit(): Promise<void>;
  /** Closes and deletes the temp file; the target is left as it was. */
  abort(): Promise<void>;
}

export async function openAtomicFile(target: string): Promise<AtomicFile> {
  const tempPath = tempPathFor(target);
  const stream = createWriteStream(tempPath, { flags: 'wx', mode: 0o644 });
  trackTempFile(tempPath);
  await once(stream, 'open');
  let settled = false;
  return {
    stream,
    target,
    async commit() {
      if (settled) return;
      settled = true;
      await closeStream(stream);
      await rename(tempPath, target);
      untrackTempFile(tempPath);
    },
    async abort() {
      if (settled) return;
      settled = true;
      // Writes still queued fail once the stream is destroyed; that is the point of aborting.
      stream.on('error', () => {});
      stream.destroy();
      await rm(tempPath, { force: true });
      untrackTempFile(tempPath);
    },
  };
}

/** Writes a whole small file atomically (sidecars such as FILE.meta.json, summaries, state). */
export async function writeFileAtomic(target: string, content: string, mode = 0o644): Promise<void> {
  const tempPath = tempPathFor(target);
  trackTempFile(tempPath);
  try {
    await writeFile(tempPath, content, { mode, flag: 'wx' });
    await rename(tempPath, target);
  } catch (error) {
    await rm(tempPath, { force: true });
    throw error;
  } finally {
    untrackTempFile(tempPath);
  }
}

function closeStream(stream: WriteStream): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.once('error', reject);
    stream.end(() => resolve());
  });
}
