import { once } from 'node:events';
import type { Writable } from 'node:stream';

/** Where formatted output goes: stdout or an atomic file. Waits on backpressure so memory stays flat. */
export interface TextSink {
  /** Text, or bytes for a binary format (xlsx). */
  write(text: string | Uint8Array): Promise<void>;
}

export function streamSink(stream: Writable): TextSink {
  return {
    async write(text: string | Uint8Array): Promise<void> {
      if (text.length === 0) return;
      if (!stream.write(text)) await once(stream, 'drain');
    },
  };
}
