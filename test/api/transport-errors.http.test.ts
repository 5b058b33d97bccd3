/**
 * Transport failures as a user reads them (issue 34), over real sockets to small servers of the test:
 * a proxy that answers a tunnel as squid does for a misspelt host (503, X-Squid-Error: ERR_DNS_FAIL)
 * ends after one attempt naming the host, and a port that never completes a TLS handshake is said as
 * a connect timeout of its own length, with no advice to raise --timeout.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, RequestError, type RequestEvent } from '../../src/api/index.js';
import { knownFailure } from '../../src/exit-codes.js';

const KEY = 'test-key-transport';
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function listen<T extends Server | TcpServer>(server: T, sockets: Set<Socket>): Promise<number> {
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return (server.address() as AddressInfo).port;
}

async function failureOf(client: ReturnType<typeof createClient>): Promise<RequestError> {
  const error = await client.countries().then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  await client.close();
  expect(error).toBeInstanceOf(RequestError);
  return error as RequestError;
}

describe('a proxy that cannot find the host', () => {
  it("squid's 503 ERR_DNS_FAIL to CONNECT: one attempt, exit-5 error naming the host, no retry", async () => {
    const tunnels: string[] = [];
    const proxy = createHttpServer();
    proxy.on('connect', (req, socket: Socket) => {
      tunnels.push(req.url ?? '');
      // squid 6's answer to CONNECT for a name its DNS does not know, headers as it sends them.
      socket.end(
        'HTTP/1.1 503 Service Unavailable\r\nServer: squid\r\nX-Squid-Error: ERR_DNS_FAIL 0\r\n' +
          'Content-Length: 0\r\nConnection: close\r\n\r\n',
      );
    });
    const port = await listen(proxy, new Set());
    const events: RequestEvent[] = [];
    const error = await failureOf(
      createClient({
        baseUrl: 'https://api.misspelt-host.test',
        apiKey: KEY,
        proxy: new URL(`http://127.0.0.1:${port}`),
        retryBaseDelayMs: 1,
        onRequest: (event) => events.push(event),
      }),
    );
    expect(error.message).toBe(
      `the proxy http://127.0.0.1:${port} found no host api.misspelt-host.test (503 ERR_DNS_FAIL)`,
    );
    expect(error.code).toBe('proxy_dns_failure');
    expect(error.retryable).toBe(false);
    expect(events).toHaveLength(1);
    expect(tunnels).toEqual(['api.misspelt-host.test:443']);
  });

  it('a 503 without that header is still the proxy failing to connect, and retried', async () => {
    let tunnels = 0;
    const proxy = createHttpServer();
    proxy.on('connect', (_req, socket: Socket) => {
      tunnels++;
      socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    });
    const port = await listen(proxy, new Set());
    const error = await failureOf(
      createClient({
        baseUrl: 'https://api.example.test',
        apiKey: KEY,
        proxy: new URL(`http://127.0.0.1:${port}`),
        maxRetries: 2,
        retryBaseDelayMs: 1,
      }),
    );
    expect(error.message).toMatch(
      /after 3 attempts \(last: proxy: the proxy http:\/\/127\.0\.0\.1:\d+ could not connect/,
    );
    expect(tunnels).toBe(3);
  });
});

describe('a connection that never opens', () => {
  it('is a connect timeout of its own length, with advice about the address, not --timeout', async () => {
    // Accepts TCP and says nothing: the TLS handshake never completes.
    const port = await listen(createTcpServer(), new Set());
    const error = await failureOf(
      createClient({
        baseUrl: `https://127.0.0.1:${port}`,
        apiKey: KEY,
        connectTimeoutMs: 300,
        timeoutMs: 20_000,
        maxRetries: 0,
      }),
    );
    expect(error.message).toBe(
      `no answer from 127.0.0.1:${port} for /countries after 1 attempt (last: timeout: no connection within 300 ms)`,
    );
    expect(error.kind).toBe('connecting');
    const { hint } = knownFailure(error)!;
    expect(hint).toMatch(/^Nothing completed a connection there: check the base URL's host and port/);
    expect(hint).not.toMatch(/timeout/);
  });
});
