/**
 * Bytes from the service are data (issue 27): the client asks for gzip, and reads a compressed
 * answer, asked for or not, as the JSON it is; an answer whose encoding is broken is a failed
 * attempt that names what is wrong, never "invalid JSON" with binary bytes in it.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync, brotliCompressSync, createGzip } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, RequestError, type RequestEvent } from '../../src/api/index.js';
import { companiesPage } from '../helpers/scripted-server.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server that answers every request with these bytes and headers, and keeps what it was sent. */
async function serve(
  body: Buffer,
  headers: Record<string, string>,
): Promise<{ url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length, ...headers });
    res.end(body);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen };
}

const PAGE = Buffer.from(JSON.stringify(companiesPage(['a.com', 'b.com'], null)));

async function firstPage(url: string) {
  const client = createClient({ baseUrl: url, apiKey: 'test-key-123456', maxRetries: 0 });
  try {
    for await (const page of client.companies({ technology: 'Shopify' })) return page;
    return undefined;
  } finally {
    await client.close();
  }
}

describe('compressed answers', () => {
  it('asks for gzip', async () => {
    const { url, seen } = await serve(gzipSync(PAGE), { 'content-encoding': 'gzip' });
    const page = await firstPage(url);
    expect(page?.data.map((row) => row.domain)).toEqual(['a.com', 'b.com']);
    expect(seen[0]?.['accept-encoding']).toBe('gzip');
  });

  it('reads an encoding it did not ask for (br) as well', async () => {
    const { url } = await serve(brotliCompressSync(PAGE), { 'content-encoding': 'br' });
    expect((await firstPage(url))?.data).toHaveLength(2);
  });

  it('a broken gzip answer is a failed attempt that says so, with no binary bytes', async () => {
    const broken = gzipSync(PAGE).subarray(0, 20);
    const { url } = await serve(broken, { 'content-encoding': 'gzip' });
    const error = await firstPage(url).then(
      () => undefined,
      (thrown: Error) => thrown,
    );
    expect(error?.message).toMatch(
      /^no answer from 127\.0\.0\.1:\d+ for \/companies after 1 attempt \(last: answer lost: 200 arrived but its body did not \(an answer whose gzip encoding is broken or cut short\)\)$/,
    );
    expect(error?.message).not.toMatch(/[\u0000-\u0008\u000e-\u001f\u007f-\uffff]/);
  });
});

/**
 * A 200 whose body was cut (issue 34): the request reached the service, which may have charged it, so it
 * is an answer lost, never a connection failure; the money side counts each such attempt as possibly
 * charged, from the event's `answerLost` and the error's `answer_lost` code and `answers_lost`.
 */
describe('a cut answer is an answer lost', () => {
  it('a 200 whose gzip body is cut: each attempt is reported lost, and the error says how many', async () => {
    const cut = gzipSync(PAGE).subarray(0, 40);
    const { url } = await serve(cut, { 'content-encoding': 'gzip' });
    const events: RequestEvent[] = [];
    const client = createClient({
      baseUrl: url,
      apiKey: 'test-key-123456',
      maxRetries: 1,
      retryBaseDelayMs: 1,
      onRequest: (event) => events.push(event),
    });
    const error = await client.verify('a@b.com').then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    await client.close();
    expect(error).toBeInstanceOf(RequestError);
    const failed = error as RequestError;
    expect(failed.code).toBe('answer_lost');
    expect(failed.status).toBe(200);
    expect(failed.details.answers_lost).toBe(2);
    expect(failed.message).toMatch(/\(last: answer lost: 200 arrived but its body did not/);
    expect(failed.message).not.toMatch(/connection:/);
    expect(events.map((event) => event.answerLost)).toEqual([true, true]);
  });

  it('a 503 whose body is cut is no answer lost: the service said it did not answer', async () => {
    server = createServer((_req, res) => {
      res.writeHead(503, { 'content-encoding': 'gzip', 'content-length': 400 });
      res.write(gzipSync('{"error":{"code":"down"}}').subarray(0, 10), () => res.destroy());
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const events: RequestEvent[] = [];
    const client = createClient({
      baseUrl: url,
      apiKey: 'test-key-123456',
      maxRetries: 0,
      onRequest: (e) => events.push(e),
    });
    const error = (await client.countries().catch((thrown: unknown) => thrown)) as RequestError;
    await client.close();
    expect(error.code).not.toBe('answer_lost');
    expect(events[0]?.answerLost).toBeUndefined();
  });

  it('the deadline stops a gzip body still arriving and decoding, as a timeout', async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' });
      const gzip = createGzip({ flush: 2 });
      gzip.pipe(res);
      gzip.write('{"data":[');
      // A row every 100 ms, each flushed: the body never stalls long enough for a read timeout alone.
      const timer = setInterval(() => gzip.write('"row",'), 100);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = createClient({ baseUrl: url, apiKey: 'test-key-123456', maxRetries: 0, timeoutMs: 700 });
    const error = (await client.countries().catch((thrown: unknown) => thrown)) as RequestError;
    await client.close();
    expect(error.message).toMatch(/within 700 ms/);
    expect(error.code).toBe('answer_lost');
  });
});
