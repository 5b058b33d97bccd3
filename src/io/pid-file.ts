/**
 * Pid files: a file created exclusively that names the process holding it (its pid and host), so
 * that one process at a time holds something (a --state directory's lock, the claim to pay for an
 * address) and what a dead process held is taken over. This module alone decides whether a holder
 * is gone; atomic-file.ts sweeps its temp files, named by pid, on the same decision.
 */
import { randomBytes } from 'node:crypto';
import { link, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';

/** Who holds a pid file: a process, and the machine it runs on. */
export interface Holder {
  pid: number;
  host: string;
}

/**
 * The very file that was read: its inode, time and text. An inode alone does not tell it from a file
 * made since, which may reuse the number at once.
 */
export interface FileSeen {
  ino: number;
  mtimeMs: number;
  text: string;
}

/**
 * What a pid file says of its holder; `holder` is undefined for a file not yet (or never) written.
 * `seen` is the file that was read, so that only that one is removed (removeAbandoned).
 */
export type PidFileState<T extends Holder> =
  { kind: 'absent' } | { kind: 'held' | 'abandoned'; holder: T | undefined; seen: FileSeen };

/**
 * A pid file still unreadable this long after it was created was left by a process that died
 * between creating and writing it; a younger one is being written right now.
 */
export const UNWRITTEN_ABANDONED_MS = 10_000;

export function thisProcess(): Holder {
  return { pid: process.pid, host: hostname() };
}

/**
 * Whether a holder is gone: its process no longer exists on this machine. A holder on another
 * machine cannot be checked from here, so it is never gone. Signal 0 checks without sending
 * anything; EPERM means the process exists but belongs to someone else.
 */
export function holderIsGone(holder: Holder): boolean {
  if (holder.host !== hostname()) return false;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'EPERM';
  }
}

/** Creates `path` (mode 0600) holding `record`, only if nothing is there: false when a file is. */
export async function createPidFile<T extends Holder>(path: string, record: T): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(JSON.stringify(record));
  } finally {
    await handle.close();
  }
  return true;
}

/**
 * Reads a pid file: absent, held (by a live process, by one on another machine, or being written),
 * or abandoned (its process is gone, or it was never written). `parse` gives the record, or
 * undefined for one it cannot read.
 */
export async function readPidFile<T extends Holder>(
  path: string,
  parse: (value: unknown) => T | undefined,
): Promise<PidFileState<T>> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    throw error;
  }
  let seen: FileSeen;
  try {
    seen = await readOpen(handle);
  } finally {
    await handle.close();
  }
  const holder = parseOrUndefined(seen.text, parse);
  const gone = holder === undefined ? Date.now() - seen.mtimeMs > UNWRITTEN_ABANDONED_MS : holderIsGone(holder);
  return { kind: gone ? 'abandoned' : 'held', holder, seen };
}

async function readOpen(handle: FileHandle): Promise<FileSeen> {
  const { ino, mtimeMs } = await handle.stat();
  return { ino, mtimeMs, text: await handle.readFile('utf8') };
}

/**
 * Removes the abandoned pid file that was read, and only that one. Two processes may both find the
 * same file abandoned: if the first has already removed it and made its own, the second must not
 * remove that. The file is moved aside first (one atomic rename); a file moved aside that is not the
 * one read belongs to a live process that took over meanwhile, and is put back.
 */
export async function removeAbandoned(path: string, found: { seen: FileSeen }): Promise<void> {
  const aside = `${path}.abandoned-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // removed by the other one already
    throw error;
  }
  const handle = await open(aside, 'r');
  const moved = await readOpen(handle).finally(() => handle.close());
  const same = moved.ino === found.seen.ino && moved.mtimeMs === found.seen.mtimeMs && moved.text === found.seen.text;
  if (!same) await link(aside, path).catch(() => {});
  await rm(aside, { force: true });
}

function parseOrUndefined<T>(text: string, parse: (value: unknown) => T | undefined): T | undefined {
  try {
    return parse(JSON.parse(text));
  } catch {
    return undefined;
  }
}
