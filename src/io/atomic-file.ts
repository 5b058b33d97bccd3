import { randomBytes } from 'node:crypto';
import { closeSync, createWriteStream, fsyncSync, mkdirSync, openSync, type WriteStream } from 'node:fs';
import { access, constants, copyFile, open, readdir, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { basename, dirname, join, resolve } from 'node:path';
import { CliError, ExitCode } from '../exit-codes.js';
import { holderIsGone, thisProcess } from './pid-file.js';
import { trackTempFile, untrackTempFile } from './temp-files.js';

function tempPathFor(target: string): string {
  const suffix = `${process.pid}-${randomBytes(4).toString('hex')}`;
  return join(dirname(target), `.${basename(target)}.prospect-tmp-${suffix}`);
}

export interface AtomicFile {
  readonly stream: WriteStream;
  readonly target: string;
  /**
   * Flushes, fsyncs and closes the temp file, renames it over the target, and fsyncs the directory;
   * `beforeRename` runs once the temp file is complete, just before the rename (see dropSidecar).
   */
  commit(beforeRename?: () => Promise<void>): Promise<void>;
  /** Closes and deletes the temp file; the target is left as it was. */
  abort(): Promise<void>;
}

/**
 * A run killed outright (SIGKILL, a power cut) cannot remove its temp file; the next write of the
 * same target (an output, a sidecar, a summary, a checkpoint) does, when the process that wrote it is
 * gone (pid-file.ts decides). The name holds only the pid: its writer is taken to be on this machine.
 */
async function sweepOrphanedTempFiles(target: string): Promise<void> {
  const prefix = `.${basename(target)}.prospect-tmp-`;
  const names = await readdir(dirname(target)).catch(() => [] as string[]);
  for (const name of names) {
    const pid = name.startsWith(prefix) ? Number(/^(\d+)-[0-9a-f]+$/.exec(name.slice(prefix.length))?.[1]) : NaN;
    // A name planted there (a directory, another user's file) is not ours to remove: it is left, never fatal.
    if (Number.isInteger(pid) && holderIsGone({ ...thisProcess(), pid }))
      await rm(join(dirname(target), name), { force: true }).catch(() => {});
  }
}

/** Tries before a run gives up on names already taken: each is random, so a second one taken is already a plant. */
const TEMP_NAME_TRIES = 8;

/**
 * Creates a temp file beside `target` with `create`, which must refuse a name already taken
 * (O_EXCL: EEXIST for a file, a directory or a symlink planted there); another name is then chosen,
 * and what is planted is left alone. Resolves to the temp file's path, tracked for the signal handler.
 */
async function createTempFile(target: string, create: (tempPath: string) => Promise<void>): Promise<string> {
  for (let tries = 1; ; tries++) {
    const tempPath = tempPathFor(target);
    trackTempFile(tempPath);
    try {
      await create(tempPath);
      return tempPath;
    } catch (error) {
      untrackTempFile(tempPath);
      const taken = (error as NodeJS.ErrnoException).code === 'EEXIST';
      // Not taken: the file, if made at all, is ours (a full disk mid-write), and goes.
      if (!taken) await rm(tempPath, { force: true }).catch(() => {});
      if (!taken || tries === TEMP_NAME_TRIES) throw error;
    }
  }
}

/**
 * A file the person asked for (an output, a sidecar, a summary) is created as any program creates one:
 * 0666 less the umask. What prospect keeps for itself (checkpoints, ledgers) passes 0o600.
 */
const USER_FILE_MODE = 0o666;

export async function openAtomicFile(target: string): Promise<AtomicFile> {
  await sweepOrphanedTempFiles(target);
  let stream: WriteStream | undefined;
  const tempPath = await createTempFile(target, async (path) => {
    // flush: the data is fsynced before the file is closed, so after a power cut the rename never shows an empty file.
    stream = createWriteStream(path, { flags: 'wx', mode: USER_FILE_MODE, flush: true });
    await once(stream, 'open');
  });
  return atomicFileOver(stream!, tempPath, target);
}

function atomicFileOver(stream: WriteStream, tempPath: string, target: string): AtomicFile {
  let settled = false;
  return {
    stream,
    target,
    async commit(beforeRename) {
      if (settled) return;
      settled = true;
      await moveIntoPlace(tempPath, target, () => closeStream(stream), beforeRename);
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

/** Writes a whole small file atomically and durably (sidecars such as FILE.meta.json, summaries, state). */
export async function writeFileAtomic(target: string, content: string, mode = USER_FILE_MODE): Promise<void> {
  await sweepOrphanedTempFiles(target);
  const tempPath = await createTempFile(target, (path) => writeFile(path, content, { mode, flag: 'wx', flush: true }));
  await moveIntoPlace(tempPath, target, async () => {});
}

/** Copies a file over `target` atomically and durably, where a rename cannot (another file system). */
export async function copyFileAtomic(source: string, target: string): Promise<void> {
  await sweepOrphanedTempFiles(target);
  const tempPath = await createTempFile(target, (path) => copyFile(source, path, constants.COPYFILE_EXCL));
  await moveIntoPlace(tempPath, target, async () => {
    const handle = await open(tempPath, 'r+');
    await handle.sync().finally(() => handle.close());
  });
}

/**
 * Finishes the temp file (written and fsynced), then renames it over the target and fsyncs the
 * directory, so that after a power cut the target holds the old file or the whole new one. If the
 * last write hits a full disk or the rename is refused, the target keeps its old content and the
 * temp file does not stay beside it.
 */
async function moveIntoPlace(
  tempPath: string,
  target: string,
  finishWriting: () => Promise<void>,
  beforeRename?: () => Promise<void>,
): Promise<void> {
  try {
    await finishWriting();
    await assertReplaceable(target);
    await beforeRename?.();
    await rename(tempPath, target);
  } catch (error) {
    await rm(tempPath, { force: true });
    throw error;
  } finally {
    untrackTempFile(tempPath);
  }
  syncDirectory(dirname(target));
}

/**
 * Removes FILE.meta.json, durably, just before FILE is replaced (its new record is renamed in after):
 * a crash between the two renames then leaves the new FILE with no record, never beside the old one's.
 */
export async function dropSidecar(path: string): Promise<void> {
  await assertReplaceable(path);
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  syncDirectory(dirname(path));
}

/**
 * A read-only file is the person saying "keep this": it is never replaced (rename(2) would, and
 * root may write anything, so the mode is read as well as access(2)).
 */
export async function assertReplaceable(target: string): Promise<void> {
  const existing = await stat(target).catch(() => undefined);
  if (existing === undefined || !existing.isFile()) return;
  const writable =
    (existing.mode & 0o222) !== 0 &&
    (await access(target, constants.W_OK).then(
      () => true,
      () => false,
    ));
  if (writable) return;
  throw new CliError(
    `cannot write ${target}: the file is read-only (mode ` +
      `${(existing.mode & 0o777).toString(8).padStart(4, '0')}), so prospect does not replace it.`,
    ExitCode.output,
    'Make it writable (chmod u+w) or remove it if it may go, or give another path.',
  );
}

/**
 * Makes a rename or a new file in `directory` durable: without this, a power cut can undo the
 * rename even though the file's data is on disk. A file system that cannot sync a directory says
 * so with EINVAL (or ENOTSUP); its renames are as durable as it makes them. Synchronous (a fraction
 * of a millisecond) so that the verification ledger's synchronous appends can use it too.
 */
export function syncDirectory(directory: string): void {
  const fd = openSync(directory, 'r');
  try {
    fsyncSync(fd);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'ENOTSUP') throw error;
  } finally {
    closeSync(fd);
  }
}

/**
 * mkdir -p, durably: the parent of each directory it creates is synced, so the files made in it
 * (checkpoints, paid results) are not lost with it in a power cut.
 */
export function makeDirectoryDurable(directory: string, mode: number): void {
  const created = mkdirSync(directory, { recursive: true, mode });
  if (created === undefined) return;
  const first = resolve(created);
  for (let made = resolve(directory); ; made = dirname(made)) {
    syncDirectory(dirname(made));
    if (made === first || dirname(made) === made) return;
  }
}

/** Ends the stream and waits for 'close', not 'finish': the flush (fsync) happens as the file is closed. */
function closeStream(stream: WriteStream): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.once('error', reject);
    stream.once('close', () => resolve());
    stream.end();
  });
}
