/**
 * Bytes from the service are data (issue 27): the client asks for gzip, and reads a compressed
 * answer, asked for or not, as the JSON it is; an answer whose encoding is broken is a failed
 * attempt that names what is wrong, never "invalid JSON" with binary bytes in it.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync, brotliCompressSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api/index.js';
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
      /^no answer from 127\.0\.0\.1:\d+ for \/companies after 1 attempt \(last: connection: an answer whose gzip encoding is broken or cut short\)$/,
    );
    expect(error?.message).not.toMatch(/[\u0000-\u0008\u000e-\u001f\u007f-\uffff]/);
  });
});
