/**
 * An answer's body off the wire, decoded (one Content-Encoding layer at most: layers multiply a bomb) and counted
 * as it arrives and as it inflates, so a gzip bomb stops at the cap, not in the OOM killer.
 */
import { PassThrough, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

const DECODERS: Readonly<Record<string, () => NodeJS.ReadWriteStream>> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/** An encoding the answer cannot be read in, or one whose bytes are broken or cut short. */
export class UndecodableBodyError extends Error {
  override readonly name = 'UndecodableBodyError';
}

/** The answer refused before or while it was read: over the cap, or in more layers than one. */
export class AnswerRefusedError extends Error {
  override readonly name = 'AnswerRefusedError';

  constructor(
    message: string,
    readonly code: 'answer_too_large' | 'answer_encoding_refused',
  ) {
    super(message);
  }
}

/** `64 MiB`, `1.5 MiB`, `900 KiB`: a byte count as a person reads a cap. */
function formatBytes(bytes: number): string {
  const mib = bytes / 1024 / 1024;
  if (mib >= 1) return `${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB`;
  return `${Math.ceil(bytes / 1024)} KiB`;
}

/** The one decoding Content-Encoding asks for (undefined: none), or why the answer is refused. */
function answerEncoding(contentEncoding: string | string[] | undefined, capBytes: number): string | undefined {
  const header = Array.isArray(contentEncoding) ? contentEncoding.join(',') : (contentEncoding ?? '');
  const encodings = header
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '' && name !== 'identity');
  if (encodings.length > 1)
    throw new AnswerRefusedError(
      `an answer in ${encodings.length} layers of encoding (Content-Encoding: ${header.slice(0, 40)}); prospect ` +
        `decodes one, so that no answer can grow past the cap on answers (${formatBytes(capBytes)})`,
      'answer_encoding_refused',
    );
  const [name] = encodings;
  if (name !== undefined && DECODERS[name] === undefined)
    throw new UndecodableBodyError(
      `an answer in an encoding prospect cannot read (Content-Encoding: ${name.slice(0, 40)})`,
    );
  return name;
}

/** `capBytes`: decoded bytes (and bytes on the wire) allowed; `signal` stops both; `where`: host:port, for messages. */
type BodyLimits = { capBytes: number; signal: AbortSignal; where: string };

/** Decoded chunks, for answer-text.ts; throws AnswerRefusedError, UndecodableBodyError or the transport's error. */
export async function readAnswerBody(
  body: Readable,
  contentEncoding: string | string[] | undefined,
  limits: BodyLimits,
): Promise<Buffer[]> {
  const encoding = answerEncoding(contentEncoding, limits.capBytes);
  const tooLarge = () =>
    new AnswerRefusedError(
      `the answer from ${limits.where} is larger than the cap on answers (${formatBytes(limits.capBytes)}, ` +
        `${limits.capBytes} bytes)${encoding !== undefined ? ` once decoded from ${encoding}` : ''}`,
      'answer_too_large',
    );
  const chunks: Buffer[] = [];
  let decoded = 0;
  const wire = fromWire(body, limits.capBytes, tooLarge);
  const keep = new Writable({
    write(chunk: Buffer, _encoding, done) {
      decoded += chunk.length;
      if (decoded > limits.capBytes) return done(tooLarge());
      chunks.push(chunk);
      done();
    },
  });
  try {
    if (encoding === undefined) await pipeline(wire, keep, { signal: limits.signal });
    else await pipeline(wire, DECODERS[encoding]!(), keep, { signal: limits.signal });
  } catch (error) {
    if (isZlibError(error))
      throw new UndecodableBodyError(`an answer whose ${encoding} encoding is broken or cut short`, { cause: error });
    throw error;
  } finally {
    if (!body.readableEnded) body.destroy();
  }
  return chunks;
}

/**
 * The body's bytes taken as fast as they arrive, counted against the cap, never pushing back: undici 7's parser,
 * paused by a slow reader, asserts uncatchably when the server closes (nodejs/undici#5360, fixed in undici 8).
 */
function fromWire(body: Readable, capBytes: number, tooLarge: () => Error): PassThrough {
  const wire = new PassThrough();
  let onWire = 0;
  body.on('data', (chunk: Buffer) => {
    onWire += chunk.length;
    if (onWire <= capBytes) wire.write(chunk);
    else {
      body.destroy();
      wire.destroy(tooLarge());
    }
  });
  body.once('end', () => wire.end());
  body.once('error', (error) => wire.destroy(error));
  body.once('close', () => {
    if (!body.readableEnded) wire.destroy(new Error('the answer stopped before its end'));
  });
  return wire;
}

function isZlibError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('Z_');
}
