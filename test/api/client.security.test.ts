import { afterEach, describe, expect, it } from 'vitest';
import { connect, createServer as createNetServer, type Server, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { inspect } from 'node:util';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ClientOptionError,
  RequestError,
  ServiceError,
  createClient,
  type ClientOptions,
  type ProspectClient,
  type RequestEvent,
} from '../../src/api/index.js';
import { ExitCode, exitCodeOf } from '../../src/exit-codes.js';
import { runCli, runInProcess, scratchDir } from '../helpers/cli.js';
import { IN_CI } from '../helpers/programs.js';
import {
  clientOf,
  closeScripted,
  companiesPage,
  errorBody,
  failure,
  serveScript,
  type Script,
  type ScriptedServer,
} from '../helpers/scripted-server.js';

const KEY = 'sk_live_DO_NOT_LEAK_7f3a9c';
/** The key as a JSON encoder that escapes everything writes it: \u0073\u006b… */
const escapedKey = [...KEY].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
const serve = serveScript;
const clientFor = (server: ScriptedServer, options: Partial<ClientOptions> = {}): ProspectClient =>
  clientOf(server, { apiKey: KEY, retryBaseDelayMs: 1, timeoutMs: 300, maxRetries: 1, ...options });

afterEach(closeScripted);

async function listAll(client: ProspectClient): Promise<void> {
  for await (const page of client.companies({ technology: 'Shopify' })) void page;
}

describe('redirects', () => {
  it.each([301, 302, 307, 308])('%i is not followed and the other origin gets nothing', async (status) => {
    const elsewhere = await serve([{ body: companiesPage(['stolen.com']) }]);
    const service = await serve([
      { status, headers: { location: `${elsewhere.url}/api/v1/companies?technology=Shopify` } },
    ]);
    const error = await failure(listAll(clientFor(service)));
    expect(error).toBeInstanceOf(ServiceError);
    expect(exitCodeOf(error)).toBe(ExitCode.service);
    expect(error.message).toBe(
      `the service redirected to ${elsewhere.url} (${status} ${status === 301 ? 'Moved Permanently' : status === 302 ? 'Found' : status === 307 ? 'Temporary Redirect' : 'Permanent Redirect'}); prospect does not follow redirects with your key`,
    );
    expect(service.requests).toHaveLength(1);
    expect(elsewhere.requests).toHaveLength(0);
  });
});

describe('plain http', () => {
  it('to a non-loopback host is refused', () => {
    for (const baseUrl of ['http://example.invalid', 'http://192.0.2.1:4010', 'http://[2001:db8::1]']) {
      expect(() => createClient({ baseUrl, apiKey: KEY })).toThrow(ClientOptionError);
      expect(() => createClient({ baseUrl, apiKey: KEY })).toThrow(/refusing to send the API key over plain http/);
    }
  });

  it('to loopback is allowed', async () => {
    const server = await serve([{ body: companiesPage(['a.com']) }]);
    const client = clientFor(server, { baseUrl: server.url.replace('127.0.0.1', 'localhost') });
    await listAll(client);
    expect(server.requests).toHaveLength(1);
  });

  // A trap on this machine's own network address: a client that sent the key over plain http to a
  // host that is not loopback would reach it. A control connection proves it is reachable, and a
  // second one, made after the client is done, comes after anything the client could have sent
  // (connections are accepted in order), so no wait is needed to know nothing else came.
  const address = nonLoopbackAddress();
  it.skipIf(!address && !IN_CI)(
    "the refusal happens before any socket: a trap on this machine's network address gets nothing (library and CLI)",
    async () => {
      expect(address, 'this machine has no non-loopback IPv4 address to set the trap on').toBeDefined();
      const trap = await listenTrap(address!);
      try {
        const base = `http://${address}:${trap.port}`;
        await trap.control();
        const run = await runCli(['--timeout', '1', '--max-retries', '0', 'companies', '-t', 'Shopify'], {
          url: base,
          apiKey: KEY,
        });
        await trap.control();
        // The two control connections, and nothing from the CLI in between.
        expect(trap.connections).toBe(2);
        expect(trap.received()).not.toContain(KEY);
        expect(run.code).toBe(2);
        expect(run.stderr).toMatch(/refusing to send the API key over plain http/);
        expect(() => createClient({ baseUrl: base, apiKey: KEY })).toThrow(ClientOptionError);
      } finally {
        await trap.close();
      }
    },
  );
});

describe('the key never leaks', () => {
  const scenarios: Array<[string, Script, Partial<ClientOptions>?]> = [
    ['401 echoing the key', [{ status: 401, body: errorBody('unauthorized', `unknown key ${KEY}`, { key: KEY }) }]],
    ['403 echoing the key', [{ status: 403, body: errorBody('forbidden', `key ${KEY} is blocked`) }]],
    [
      '422 echoing the key',
      [{ status: 422, body: errorBody('no_match', `nothing for ${KEY}`, { suggestions: [KEY] }) }],
    ],
    ['400 with a text body', [{ status: 400, body: `Bearer ${KEY} is malformed` }]],
    ['500 after retries', [{ status: 500, body: errorBody('internal_error', `crash while handling ${KEY}`) }]],
    [
      '429 with a long wait',
      [{ status: 429, headers: { 'retry-after': '999' }, body: errorBody('rate_limited', KEY) }],
    ],
    ['HTML page with the key', [{ body: `<html>Authorization: Bearer ${KEY}</html>` }]],
    ['invalid JSON starting with the key', [{ body: `${KEY}{` }]],
    ['wrong shape with the key', [{ body: { data: [{ domain: KEY, crux_rank: KEY }] } }]],
    ['redirect to a URL with the key', [{ status: 302, headers: { location: `https://${KEY}.example/?k=${KEY}` } }]],
    ['reset connection', [{ resetConnection: true }]],
    ['mid-body destroy', [{ destroyMidBody: true, body: companiesPage(['a.com']) }]],
    ['timeout', [{ neverRespond: true }], { timeoutMs: 50 }],
  ];

  it.each(scenarios)('%s', async (_name, script, options) => {
    const server = await serve(script);
    const events: RequestEvent[] = [];
    const client = clientFor(server, { onRequest: (event) => events.push(event), ...options });
    const error = await failure(listAll(client));
    expect(error).toBeInstanceOf(RequestError);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    for (const text of [
      error.message,
      String(error.stack),
      JSON.stringify(error),
      inspect(error, { depth: 8, showHidden: false }),
      JSON.stringify(events),
      inspect(events, { depth: 8 }),
    ]) {
      expect(text).not.toContain(KEY);
    }
  });

  it.each([
    ['JSON-escaped', escapedKey],
    [
      'JSON-escaped in upper-case hex',
      escapedKey.replace(/u00([0-9a-f]{2})/g, (_all, hex: string) => `u00${hex.toUpperCase()}`),
    ],
    [
      'half escaped, half percent-encoded',
      `${escapedKey.slice(0, 30)}${encodeURIComponent(KEY.slice(5)).toLowerCase()}`,
    ],
  ])('a 5xx body echoing the key %s', async (_name, written) => {
    // The body as text, so the escapes reach the client as the service wrote them.
    const body = `{"error":{"code":"internal_error","reason":"crash while handling ${written}"}}`;
    const server = await serve([{ status: 500, headers: { 'content-type': 'application/json' }, body }]);
    const error = await failure(listAll(clientFor(server)));
    expect(error.message).toContain('[redacted]');
    expect(`${error.message} ${JSON.stringify(error)} ${inspect(error, { depth: 8 })}`).not.toContain(KEY);
  });

  it("a page's meta echoing the key JSON-escaped is given without it; the rows and cursor stay", async () => {
    const page = companiesPage(['a.com'], null);
    const meta = { ...(page.meta as object), scope: `__SCOPE__`, note: { deep: ['__SCOPE__'] } };
    const body = JSON.stringify({ ...page, meta }).replaceAll('__SCOPE__', `scope of ${escapedKey}`);
    const server = await serve([{ headers: { 'content-type': 'application/json' }, body }]);
    const pages = [];
    for await (const got of clientFor(server).companies({ technology: 'Shopify' })) pages.push(got);
    expect(pages[0]!.meta).toMatchObject({ scope: 'scope of [redacted]', note: { deep: ['scope of [redacted]'] } });
    expect(JSON.stringify(pages)).not.toContain(KEY);
    expect(pages[0]!.data[0]!.domain).toBe('a.com');
  });

  it("a contacts answer's meta echoing the key is given without it", async () => {
    const body = `{"data":[],"meta":{"scope":"for ${escapedKey}"}}`;
    const server = await serve([{ headers: { 'content-type': 'application/json' }, body }]);
    const result = await clientFor(server).contacts({ domains: ['a.com'] });
    expect(result.meta).toEqual({ scope: 'for [redacted]' });
  });

  it('companies --summary and FILE.meta.json of a service echoing the key in meta.scope hold no form of it', async () => {
    const page = companiesPage(['a.com'], null);
    const body = JSON.stringify({ ...page, meta: { ...(page.meta as object), scope: '__SCOPE__' } }).replace(
      '__SCOPE__',
      `all of ${escapedKey}`,
    );
    const server = await serve([{ headers: { 'content-type': 'application/json' }, body }]);
    const dir = await scratchDir();
    const run = await runInProcess(
      ['companies', '-t', 'Shopify', '-o', join(dir, 'out.csv'), '--summary', join(dir, 'run.json'), '--verbose'],
      { apiKey: KEY, url: server.url },
    );
    expect(run.code).toBe(0);
    for (const file of ['run.json', 'out.csv.meta.json']) {
      const text = readFileSync(join(dir, file), 'utf8');
      expect(JSON.parse(text).scope).toBe('all of [redacted]');
      expect(text).not.toContain(escapedKey);
    }
    expect(run.stderr).toContain('Scope: all of [redacted].');
  });

  it('verify and contacts errors too', async () => {
    const server = await serve([{ status: 401, body: errorBody('unauthorized', KEY) }]);
    const client = clientFor(server);
    for (const call of [client.verify('a@b.com'), client.contacts({ domains: ['a.com'] })]) {
      const error = await failure(call);
      expect(`${error.message} ${error.stack} ${JSON.stringify(error)} ${inspect(error, { depth: 8 })}`).not.toContain(
        KEY,
      );
    }
  });

  it('a usage error about the key does not quote it', () => {
    const error = (() => {
      try {
        createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: `${KEY}\r\n` });
      } catch (caught) {
        return caught as Error;
      }
      throw new Error('expected a refusal');
    })();
    expect(`${error.message} ${error.stack} ${JSON.stringify(error)}`).not.toContain(KEY);
  });
});

/** The first IPv4 address of this machine that is not loopback (undefined in a sandbox with no network). */
function nonLoopbackAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((info) => info !== undefined && info.family === 'IPv4' && !info.internal)?.address;
}

/** A TCP listener that counts connections and keeps what it received; `control()` connects to it and waits until it is counted. */
async function listenTrap(host: string): Promise<{
  port: number;
  connections: number;
  received(): string;
  control(): Promise<void>;
  close(): Promise<void>;
}> {
  const sockets: Socket[] = [];
  const chunks: Buffer[] = [];
  const state = { connections: 0 };
  /** Waiters for a connection from a given client port. */
  const awaited = new Map<number, () => void>();
  const server: Server = createNetServer((socket) => {
    state.connections++;
    sockets.push(socket);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    awaited.get(socket.remotePort ?? -1)?.();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    get connections() {
      return state.connections;
    },
    received: () => Buffer.concat(chunks).toString('latin1'),
    control: async () => {
      const socket = connect(address.port, host);
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      const port = socket.localPort!;
      await new Promise<void>((resolve) => {
        awaited.set(port, resolve);
        if (sockets.some((accepted) => accepted.remotePort === port)) resolve();
      });
      socket.destroy();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
