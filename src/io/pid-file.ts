/**
 * Pid files: a file created exclusively that names the process holding it (its pid and host), so
 * that one process at a time holds something (a --state directory's lock, the claim to pay for an
 * address) and what a dead process held is taken over. This module alone decides whether a holder
 * is gone; atomic-file.ts sweeps its temp files, named by pid, on the same decision.
 */
import { open, readFile, stat } from 'node:fs/promises';
import { hostname } from 'node:os';

/** Who holds a pid file: a process, and the machine it runs on. */
export interface Holder {
  pid: number;
  host: string;
}

/** What a pid file says of its holder; `holder` is undefined for a file not yet (or never) written. */
export type PidFileState<T extends Holder> =
  { kind: 'absent' } | { kind: 'held'; holder: T | undefined } | { kind: 'abandoned'; holder: T | undefined };

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
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    throw error;
  }
  const holder = parseOrUndefined(text, parse);
  if (holder !== undefined) return { kind: holderIsGone(holder) ? 'abandoned' : 'held', holder };
  const written = await stat(path).catch(() => undefined);
  if (written === undefined) return { kind: 'absent' };
  const abandoned = Date.now() - written.mtimeMs > UNWRITTEN_ABANDONED_MS;
  return { kind: abandoned ? 'abandoned' : 'held', holder: undefined };
}

function parseOrUndefined<T>(text: string, parse: (value: unknown) => T | undefined): T | undefined {
  try {
    return parse(JSON.parse(text));
  } catch {
    return undefined;
  }
}
