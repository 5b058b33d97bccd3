import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { terminalSize, type TerminalSize } from '../ui/terminal-size.js';

/** Where formatted text goes: stdout or an atomic file. Waits on backpressure so memory stays flat. */
export interface TextSink {
  write(text: string): Promise<void>;
  /** Present when the text goes to a terminal: its size now (a table fits it). */
  terminalSize?: () => TerminalSize;
}

export function streamSink(stream: Writable & { isTTY?: boolean; columns?: number; rows?: number }): TextSink {
  return {
    async write(text: string): Promise<void> {
      if (text.length === 0) return;
      if (!stream.write(text)) await once(stream, 'drain');
    },
    ...(stream.isTTY === true ? { terminalSize: () => terminalSize(stream) } : {}),
  };
}
