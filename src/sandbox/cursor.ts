/**
 * Opaque page cursors (contract rows 1, 9). A cursor carries the position of the last company served
 * and a tag of the query it belongs to, sealed with an HMAC whose key is derived from the dataset
 * (seed, size and crawl month): a forged, corrupted or foreign cursor, one of another month's crawl
 * included, is a 400 `invalid_cursor`, never a crash or a silently different listing.
 *
 * Layout before base64url: version (1 byte) · query tag (8) · position (4, big-endian) · MAC (16).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from './errors.js';

const VERSION = 1;
const TAG_BYTES = 8;
const PAYLOAD_BYTES = 1 + TAG_BYTES + 4;
const MAC_BYTES = 16;
const TOKEN_BYTES = PAYLOAD_BYTES + MAC_BYTES;

function invalidCursor(reason: string): ApiError {
  return new ApiError(400, 'invalid_cursor', reason, { parameter: 'cursor' });
}

export interface DecodedCursor {
  readonly tag: Buffer;
  /** Index (in listing order) of the last company of the previous page. */
  readonly position: number;
}

export class CursorCodec {
  private readonly key: Buffer;

  /** `crawl`: the month served, if one was asked; without it the key is the one cursors always had. */
  constructor(
    seed: number,
    datasetSize: number,
    private readonly crawl?: string,
  ) {
    const identity = `prospect-sandbox-cursor/${seed}/${datasetSize}${crawl === undefined ? '' : `/${crawl}`}`;
    this.key = createHash('sha256').update(identity).digest();
  }

  encode(queryKey: string, position: number): string {
    const payload = Buffer.alloc(PAYLOAD_BYTES);
    payload.writeUInt8(VERSION, 0);
    queryTag(queryKey).copy(payload, 1);
    payload.writeUInt32BE(position, 1 + TAG_BYTES);
    return Buffer.concat([payload, this.mac(payload)]).toString('base64url');
  }

  /** Checks the seal only; the binding to a query is checked by `assertBelongsTo` once the query is resolved. */
  decode(token: string): DecodedCursor {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(token))
      throw invalidCursor('The cursor is malformed: pass the next_cursor of the previous page verbatim.');
    const bytes = Buffer.from(token, 'base64url');
    if (bytes.length !== TOKEN_BYTES || bytes.toString('base64url') !== token)
      throw invalidCursor('The cursor is malformed: pass the next_cursor of the previous page verbatim.');
    const payload = bytes.subarray(0, PAYLOAD_BYTES);
    if (payload.readUInt8(0) !== VERSION || !timingSafeEqual(bytes.subarray(PAYLOAD_BYTES), this.mac(payload))) {
      const issued = this.crawl === undefined ? 'issued' : `issued for the crawl of ${this.crawl}`;
      throw invalidCursor(`The cursor is not one this service ${issued} (or it was altered).`);
    }
    return { tag: Buffer.from(payload.subarray(1, 1 + TAG_BYTES)), position: payload.readUInt32BE(1 + TAG_BYTES) };
  }

  assertBelongsTo(cursor: DecodedCursor, queryKey: string): void {
    if (!cursor.tag.equals(queryTag(queryKey))) {
      throw invalidCursor('The cursor belongs to another query: keep the same filters while paging.');
    }
  }

  private mac(payload: Buffer): Buffer {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, MAC_BYTES);
  }
}

function queryTag(queryKey: string): Buffer {
  return createHash('sha256').update(queryKey).digest().subarray(0, TAG_BYTES);
}
