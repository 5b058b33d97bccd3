import { once } from 'node:events';
import type { Writable } from 'node:stream';

/** Where formatted text goes: stdout or an atomic file. Waits on backpressure so memory stays flat. */
export interface TextSink {
  write(text: string): Promise<void>;
}

export function streamSink(stream: Writable): TextSink {
  return {
    async write(text: string): Promise<void> {
      if (text.length === 0) return;
      if (!stream.write(text)) await once(stream, 'drain');
    },
  };
}
