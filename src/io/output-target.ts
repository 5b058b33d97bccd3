import { fstatSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * Where a path the person names for output (-o FILE, --summary FILE) goes. Only a regular file (or
 * a new one) is written beside and renamed over: a device, a FIFO or a descriptor is written
 * directly, never replaced (renaming over /dev/null as root would replace it for the whole machine).
 */
export type OutputTarget =
  /** `-`, /dev/stdout, /dev/fd/1, /proc/self/fd/1: the process's own stdout stream. */
  | { kind: 'stdout' }
  /** /dev/stderr, /dev/fd/N, /proc/self/fd/N: the descriptor the process already has open. */
  | { kind: 'descriptor'; fd: number }
  /** An existing file that is not a regular file: a character device, a FIFO, a socket. */
  | { kind: 'device'; path: string }
  /** A regular file, or one that does not exist yet: written atomically. */
  | { kind: 'file'; path: string };

const NAMED_DESCRIPTORS: Record<string, number> = { '/dev/stdin': 0, '/dev/stdout': 1, '/dev/stderr': 2 };
const DESCRIPTOR_PATH = /^\/(?:dev\/fd|proc\/self\/fd)\/(\d+)$/;

export function outputTarget(path: string): OutputTarget {
  if (path === '-') return { kind: 'stdout' };
  const absolute = resolve(path);
  const fd = NAMED_DESCRIPTORS[absolute] ?? Number(DESCRIPTOR_PATH.exec(absolute)?.[1] ?? NaN);
  if (Number.isInteger(fd)) return fd === 1 ? { kind: 'stdout' } : { kind: 'descriptor', fd };
  const existing = statSync(absolute, { throwIfNoEntry: false });
  if (existing !== undefined && !existing.isFile() && !existing.isDirectory())
    return { kind: 'device', path: absolute };
  return { kind: 'file', path: absolute };
}

/** Whether a descriptor target is open in this process (a cron job may have closed it). */
export function descriptorIsOpen(fd: number): boolean {
  try {
    fstatSync(fd);
    return true;
  } catch {
    return false;
  }
}
