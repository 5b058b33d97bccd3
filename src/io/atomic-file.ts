import { randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { readdir, rename, rm, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { basename, dirname, join } from 'node:path';
import { processIsAlive } from '../process-alive.js';
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

/**
 * A run killed outright (SIGKILL, a power cut) cannot remove its temp file; the next run for the
 * same target does, when the process that wrote it is gone.
 */
async function sweepOrphanedTempFiles(target: string): Promise<void> {
  const prefix = `.${basename(target)}.prospect-tmp-`;
  const names = await readdir(dirname(target)).catch(() => [] as string[]);
  for (const name of names) {
    const pid = name.startsWith(prefix) ? Number(/^(\d+)-[0-9a-f]+$/.exec(name.slice(prefix.length))?.[1]) : NaN;
    if (Number.isInteger(pid) && !processIsAlive(pid)) await rm(join(dirname(target), name), { force: true });
  }
}

export async function openAtomicFile(target: string): Promise<AtomicFile> {
  await sweepOrphanedTempFiles(target);
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
      await moveIntoPlace(tempPath, target, () => closeStream(stream));
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
  await moveIntoPlace(tempPath, target, () => writeFile(tempPath, content, { mode, flag: 'wx' }));
}

/**
 * Finishes the temp file, then renames it over the target. If the last write hits a full disk or
 * the rename is refused, the target keeps its old content and the temp file does not stay beside it.
 */
async function moveIntoPlace(tempPath: string, target: string, finishWriting: () => Promise<void>): Promise<void> {
  try {
    await finishWriting();
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
