import type { Writable } from 'node:stream';

/**
 * Resolves once everything written to the stream before has gone out (rejects if it could not): the
 * callback of an empty write comes after every write before it, whether or not the stream was ever
 * full enough to emit 'drain'.
 */
export function afterPendingWrites(stream: Writable): Promise<void> {
  return new Promise((resolveWritten, reject) =>
    stream.write('', (error) => (error ? reject(error) : resolveWritten())),
  );
}
