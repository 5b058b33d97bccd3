import { open, type FileHandle } from 'node:fs/promises';
import type { TextSink } from './sink.js';

/** A file written in order whose committed length is known; a resumed run cuts it back to that length. */
export class AppendOnlyFile implements TextSink {
  private constructor(
    private readonly handle: FileHandle,
    private position: number,
  ) {}

  /** `mode` when the file is created (less the umask): the output is published as it is, the rest stays private. */
  static async open(path: string, committedBytes: number, mode = 0o600): Promise<AppendOnlyFile> {
    const handle = await open(path, committedBytes > 0 ? 'r+' : 'w', mode);
    await handle.truncate(committedBytes);
    return new AppendOnlyFile(handle, committedBytes);
  }

  get bytes(): number {
    return this.position;
  }

  async write(text: string): Promise<void> {
    const buffer = Buffer.from(text, 'utf8');
    let offset = 0;
    while (offset < buffer.length) {
      const { bytesWritten } = await this.handle.write(buffer, offset, buffer.length - offset, this.position);
      offset += bytesWritten;
      this.position += bytesWritten;
    }
  }

  sync(): Promise<void> {
    return this.handle.sync();
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}
