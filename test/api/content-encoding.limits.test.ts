/**
 * The cap and the one layer of encoding (src/api/content-encoding.ts), in process: readAnswerBody on
 * streams of the test's own, at the exact edges of the cap on the wire and once decoded; and undici's
 * crash (issue 41) on a real socket, a gzip answer followed by `Connection: close`.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { AnswerRefusedError, readAnswerBody, UndecodableBodyError } from '../../src/api/content-encoding.js';
import { createClient } from '../../src/api/index.js';
import { sampleCompany } from '../helpers/scripted-server.js';

const WHERE = 'api.example.test:443';

/** A body that arrives in chunks of 1,000 bytes, as a socket gives it. */
function bodyOf(bytes: Buffer): Readable {
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 1000) chunks.push(bytes.subarray(at, at + 1000));
  return Readable.from(chunks, { objectMode: false });
}

function read(bytes: Buffer, encoding: string | string[] | undefined, capBytes: number, signal?: AbortSignal) {
  return readAnswerBody(bodyOf(bytes), encoding, {
    capBytes,
    where: WHERE,
    signal: signal ?? new AbortController().signal,
  }).then((chunks) => Buffer.concat(chunks));
}

async function refusal(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(Error);
  return outcome as Error;
}

/** Bytes deflate cannot shrink: their gzip is larger than they are. */
const noise = (length: number) => randomBytes(length);

describe('the cap on an answer', () => {
  const CAP = 20_000;

  it('an answer of exactly the cap is read whole; one byte more is refused, naming where and the cap', async () => {
    const exact = Buffer.alloc(CAP, 0x61);
    expect((await read(exact, undefined, CAP)).equals(exact)).toBe(true);
    const error = await refusal(read(Buffer.alloc(CAP + 1, 0x61), undefined, CAP));
    expect(error).toBeInstanceOf(AnswerRefusedError);
    // The name is what a log or `--debug` shows of it.
    expect(error.name).toBe('AnswerRefusedError');
    expect((error as AnswerRefusedError).code).toBe('answer_too_large');
    expect(error.message).toBe(`the answer from ${WHERE} is larger than the cap on answers (20 KiB, 20000 bytes)`);
  });

  it('the decoded bytes meet the same cap: exactly the cap once decoded is read, one more is refused', async () => {
    const exact = Buffer.alloc(CAP, 0x62);
    expect((await read(gzipSync(exact), 'gzip', CAP)).equals(exact)).toBe(true);
    const error = await refusal(read(gzipSync(Buffer.alloc(CAP + 1, 0x62)), 'gzip', CAP));
    expect((error as AnswerRefusedError).code).toBe('answer_too_large');
    expect(error.message).toMatch(/\(20 KiB, 20000 bytes\) once decoded from gzip$/);
  });

  it('the bytes on the wire meet the cap too, even when they decode to less', async () => {
    const raw = noise(CAP - 5);
    const compressed = gzipSync(raw);
    expect(compressed.length).toBeGreaterThan(CAP);
    const error = await refusal(read(compressed, 'gzip', CAP));
    expect((error as AnswerRefusedError).code).toBe('answer_too_large');
    expect((await read(compressed, 'gzip', compressed.length)).equals(raw)).toBe(true);
  });

  it('a body over the cap is not read further: the stream is destroyed', async () => {
    const body = bodyOf(Buffer.alloc(CAP * 4, 0x61));
    const read = readAnswerBody(body, undefined, { capBytes: CAP, where: WHERE, signal: new AbortController().signal });
    await refusal(read);
    expect(body.destroyed).toBe(true);
  });

  it('the cap is said as a person reads it', async () => {
    const said = async (capBytes: number) =>
      (await refusal(read(Buffer.alloc(capBytes + 1), undefined, capBytes))).message.replace(/^.*answers \(|\)$/g, '');
    expect(await said(1024 * 1024)).toBe('1 MiB, 1048576 bytes');
    expect(await said(1.5 * 1024 * 1024)).toBe('1.5 MiB, 1572864 bytes');
    expect(await said(900 * 1024)).toBe('900 KiB, 921600 bytes');
    expect(await said(1000)).toBe('1 KiB, 1000 bytes');
  });

  it('a stop (the deadline, a signal) ends the reading, and the body is let go', async () => {
    const stop = new AbortController();
    const body = new Readable({ read() {} });
    body.push(Buffer.from('{"data":['));
    const reading = readAnswerBody(body, undefined, { capBytes: CAP, where: WHERE, signal: stop.signal });
    stop.abort(new Error('deadline'));
    // The body ends a turn after the stop: a reading the stop did not end would give a (short) answer,
    // and a body the reading did not let go would only be destroyed by its own end, after the check.
    setImmediate(() => body.push(null));
    const error = await refusal(reading);
    expect(error).not.toBeInstanceOf(AnswerRefusedError);
    expect(body.destroyed).toBe(true);
  });

  it('a stop ends the decoding of a gzip body too, with the stop as its reason', async () => {
    const stop = new AbortController();
    const body = new Readable({ read() {} });
    const bytes = gzipSync(Buffer.alloc(5000, 0x61));
    body.push(bytes.subarray(0, 100));
    const reading = readAnswerBody(body, 'gzip', { capBytes: CAP, where: WHERE, signal: stop.signal });
    const deadline = new Error('deadline');
    stop.abort(deadline);
    // The rest arrives a turn after the stop: a reading the stop did not end would give a whole answer.
    setImmediate(() => {
      body.push(bytes.subarray(100));
      body.push(null);
    });
    const error = await refusal(reading);
    expect(error.name).toBe('AbortError');
    expect(error.cause).toBe(deadline);
    expect(body.destroyed).toBe(true);
  });

  it("the transport's own error comes through as it is, not as a broken encoding", async () => {
    const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    const body = new Readable({
      read() {
        this.destroy(reset);
      },
    });
    for (const encoding of [undefined, 'gzip']) {
      const again = new Readable({
        read() {
          this.destroy(reset);
        },
      });
      expect(
        await refusal(
          readAnswerBody(encoding ? again : body, encoding, {
            capBytes: CAP,
            where: WHERE,
            signal: new AbortController().signal,
          }),
        ),
      ).toBe(reset);
    }
  });
});

describe('one layer of encoding', () => {
  const TEXT = Buffer.from('{"data":[]}');
  const CAP = 32 * 1024 * 1024;

  it('reads gzip, x-gzip, deflate and br, in any case and beside identity', async () => {
    const cases: Array<[string | string[], Buffer]> = [
      ['gzip', gzipSync(TEXT)],
      ['X-Gzip', gzipSync(TEXT)],
      ['deflate', deflateSync(TEXT)],
      ['br', brotliCompressSync(TEXT)],
      ['identity, gzip', gzipSync(TEXT)],
      [' , GZIP ', gzipSync(TEXT)],
      [['identity', 'gzip'], gzipSync(TEXT)],
      ['identity', TEXT],
      ['', TEXT],
    ];
    for (const [encoding, bytes] of cases)
      expect((await read(bytes, encoding, CAP)).toString(), String(encoding)).toBe(TEXT.toString());
  });

  it('two layers are refused before a byte is decoded, whichever way the header is split', async () => {
    for (const encoding of ['gzip, gzip', 'gzip,br', ['gzip', 'gzip']]) {
      const error = await refusal(read(gzipSync(gzipSync(TEXT)), encoding, CAP));
      expect(error).toBeInstanceOf(AnswerRefusedError);
      expect((error as AnswerRefusedError).code).toBe('answer_encoding_refused');
      expect(error.message).toMatch(
        /^an answer in 2 layers of encoding \(Content-Encoding: gzip, ?(gzip|br)\); prospect decodes one, so that no answer can grow past the cap on answers \(32 MiB\)$/,
      );
    }
    expect((await refusal(read(TEXT, 'gzip, br, deflate', CAP))).message).toMatch(/^an answer in 3 layers/);
  });

  it('an encoding it does not know, and broken bytes, are each an undecodable answer that says which', async () => {
    const unknown = await refusal(read(TEXT, 'compress', CAP));
    expect(unknown).toBeInstanceOf(UndecodableBodyError);
    expect(unknown.name).toBe('UndecodableBodyError');
    expect(unknown.message).toBe('an answer in an encoding prospect cannot read (Content-Encoding: compress)');
    const broken = await refusal(read(gzipSync(TEXT).subarray(0, 12), 'gzip', CAP));
    expect(broken).toBeInstanceOf(UndecodableBodyError);
    expect(broken.message).toBe('an answer whose gzip encoding is broken or cut short');
    expect((broken.cause as { code?: string }).code).toMatch(/^Z_/);
  });

  it("a long header is cut to 40 characters in the message: the service's text stays short", async () => {
    const unknown = await refusal(read(TEXT, `x-${'a'.repeat(100)}`, CAP));
    expect(unknown.message).toBe(
      `an answer in an encoding prospect cannot read (Content-Encoding: x-${'a'.repeat(38)})`,
    );
    const layers = await refusal(read(TEXT, `gzip, ${'b'.repeat(100)}`, CAP));
    expect(layers.message).toContain(`(Content-Encoding: gzip, ${'b'.repeat(34)}); prospect decodes one`);
  });

  it('a body that closes before its end is an error, never a short answer', async () => {
    for (const encoding of [undefined, 'gzip']) {
      const bytes = encoding ? gzipSync(Buffer.alloc(5000, 0x61)) : Buffer.alloc(5000, 0x61);
      const body = new Readable({ read() {} });
      body.push(bytes.subarray(0, 1000));
      setImmediate(() => body.destroy());
      const error = await refusal(
        readAnswerBody(body, encoding, { capBytes: CAP, where: WHERE, signal: new AbortController().signal }),
      );
      expect(error.message, String(encoding)).toMatch(/the answer stopped before its end|broken or cut short/);
      if (encoding === undefined) expect(error.message).toBe('the answer stopped before its end');
    }
  });
});

/**
 * undici 7 crashed (an uncatchable assertion, exit 1) when a server closed the connection after a gzip
 * answer of about 370 KB while its gunzip held the parser paused (nodejs/undici#5360). vitest fails a
 * file on such an uncaught error, so these would fail if the body pushed back on the parser again.
 */
describe('Connection: close after a large gzip answer', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  async function serveClosing(json: unknown): Promise<{ url: string; bytes: number }> {
    const body = gzipSync(JSON.stringify(json));
    server = createServer((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': body.length,
        connection: 'close',
      });
      res.end(body);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bytes: body.length };
  }

  const rows = (count: number) =>
    Array.from({ length: count }, (_, i) => sampleCompany(`c${i}.com`, { note: noise(600).toString('base64') }));
  const META = {
    source: { dataset: 'd', method: 'm', publisher: 'p', history_since: '2020' },
    field_fill_rates: {},
    scope: 's',
  };

  it('a 600 KB companies page, five times over: every row read, no crash', async () => {
    const { url, bytes } = await serveClosing({ data: rows(1000), meta: META });
    expect(bytes).toBeGreaterThan(370_000);
    for (let run = 0; run < 5; run++) {
      const client = createClient({ baseUrl: url, apiKey: 'test-key-123456', maxRetries: 0 });
      const domains: string[] = [];
      for await (const page of client.companies({ technology: 'Shopify' }))
        domains.push(...page.data.map((row) => row.domain));
      await client.close();
      expect(domains).toHaveLength(1000);
    }
  });

  it('a paid verify answer padded past 370 KB is an answer, not a crash', async () => {
    const { url, bytes } = await serveClosing({
      // Many unknown fields, each within the bound on one (schema-bounds.ts).
      data: {
        email: 'a@b.com',
        status: 'valid',
        ...Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`padding${i}`, noise(37_000).toString('base64')])),
      },
      meta: { units_used: 1 },
    });
    expect(bytes).toBeGreaterThan(370_000);
    const client = createClient({ baseUrl: url, apiKey: 'test-key-123456', maxRetries: 0 });
    const answer = await client.verify('a@b.com', { idempotencyKey: 'k-1' });
    await client.close();
    expect(answer).toMatchObject({ email: 'a@b.com', status: 'valid', meta: { units_used: 1 } });
  });
});
