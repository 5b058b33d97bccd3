import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { terminalSize, type TerminalSize } from '../ui/terminal-size.js';
import { displayVisible } from '../util/display-safe.js';

/** Where formatted output goes: stdout or an atomic file. Waits on backpressure so memory stays flat. */
export interface TextSink {
  /** Text, or bytes for a binary format (xlsx). */
  write(text: string | Uint8Array): Promise<void>;
  /** Present when the text goes to a terminal: its size now (a table fits it). */
  terminalSize?: () => TerminalSize;
}

/**
 * A stream as a sink. Whatever goes to a terminal (stdout that is one, `-o /dev/tty`) has the
 * service's controls made visible first, whatever the format; a file or a pipe gets the bytes.
 */
export function streamSink(
  stream: Writable & { isTTY?: boolean; columns?: number; rows?: number },
  terminal = stream.isTTY === true,
): TextSink {
  return {
    async write(data: string | Uint8Array): Promise<void> {
      if (data.length === 0) return;
      const text = terminal && typeof data === 'string' ? displayVisible(data) : data;
      // A stream that failed since the last write (a reader closed the pipe: EPIPE) says so now, not by never draining.
      if (stream.errored) throw stream.errored;
      if (!stream.write(text)) await once(stream, 'drain');
    },
    ...(stream.isTTY === true ? { terminalSize: () => terminalSize(stream) } : {}),
  };
}
