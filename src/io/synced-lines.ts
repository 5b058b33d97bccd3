import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fstatSync,
  openSync,
  readSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { syncDirectory } from './atomic-file.js';

/**
 * A file of lines that several runs append to at once, each line on disk (fdatasync) before
 * append() returns: the verification ledger and its record of paid calls sent. A crash mid-append
 * leaves a torn last line, never a finished one: it is not read, and it is cut off before this run
 * appends behind it (unless another run has appended since: it cut the line itself).
 */
export class SyncedLines {
  private fd: number | undefined;
  /** A torn last line: where it starts, and the file's size when it was read. */
  private torn: { from: number; size: number } | undefined;
  /** How far the file has been read: the end of its last complete line. */
  private readUpTo = 0;

  constructor(readonly path: string) {}

  /**
   * The complete lines appended since the last read (the first time, the whole file); `firstLine` is
   * the number of the first of them when the read began at the file's start, else undefined.
   */
  readNew(): { lines: string[]; firstLine: number | undefined } {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { lines: [], firstLine: undefined };
      throw error;
    }
    try {
      const size = fstatSync(fd).size;
      if (size <= this.readUpTo) return { lines: [], firstLine: undefined };
      const offset = this.readUpTo;
      const bytes = Buffer.alloc(size - offset);
      const read = readSync(fd, bytes, 0, bytes.length, offset);
      const complete = bytes.subarray(0, read).lastIndexOf(0x0a) + 1;
      this.torn = complete < read ? { from: offset + complete, size: offset + read } : undefined;
      this.readUpTo = offset + complete;
      const lines = bytes.subarray(0, complete).toString('utf8').split('\n').slice(0, -1);
      return { lines, firstLine: offset === 0 ? 1 : undefined };
    } finally {
      closeSync(fd);
    }
  }

  /** One write of one whole line, in append mode (lines of runs at the same time never interleave), then fdatasync. */
  append(line: string): void {
    if (this.fd === undefined) {
      this.cutTornLine();
      const created = !existsSync(this.path);
      this.fd = openSync(this.path, 'a', 0o600);
      if (created) syncDirectory(dirname(this.path));
    }
    writeSync(this.fd, `${line}\n`);
    fdatasyncSync(this.fd);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private cutTornLine(): void {
    if (this.torn === undefined) return;
    if (statSync(this.path, { throwIfNoEntry: false })?.size === this.torn.size)
      truncateSync(this.path, this.torn.from);
    this.torn = undefined;
  }
}
