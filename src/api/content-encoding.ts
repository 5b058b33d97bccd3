/**
 * Answers come compressed when we ask (Accept-Encoding: gzip) and sometimes when we do not (a proxy
 * or a misconfigured service): either way the body is decoded by its Content-Encoding before it is
 * read as JSON, so a compressed answer is never "invalid JSON with binary bytes". An encoding that
 * cannot be decoded is a transport failure like a body cut short: the bytes did not arrive usable.
 */
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate } from 'node:zlib';

const DECODERS: Readonly<Record<string, (bytes: Buffer) => Promise<Buffer>>> = {
  gzip: promisify(gunzip),
  'x-gzip': promisify(gunzip),
  deflate: promisify(inflate),
  br: promisify(brotliDecompress),
};

class UndecodableBodyError extends Error {
  override readonly name = 'UndecodableBodyError';
}

/** The body as text, undone of each encoding in Content-Encoding (last applied first). */
export async function decodedBody(contentEncoding: string | string[] | undefined, bytes: Buffer): Promise<string> {
  const header = Array.isArray(contentEncoding) ? contentEncoding.join(',') : (contentEncoding ?? '');
  const encodings = header
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '' && name !== 'identity');
  let decoded = bytes;
  for (const name of encodings.reverse()) {
    const decode = DECODERS[name];
    if (decode === undefined)
      throw new UndecodableBodyError(
        `an answer in an encoding prospect cannot read (Content-Encoding: ${name.slice(0, 40)})`,
      );
    try {
      decoded = await decode(decoded);
    } catch {
      throw new UndecodableBodyError(`an answer whose ${name} encoding is broken or cut short`);
    }
  }
  return decoded.toString('utf8');
}
