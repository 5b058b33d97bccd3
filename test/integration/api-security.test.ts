import { afterEach, describe, expect, it } from 'vitest';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { inspect } from 'node:util';
import { ClientOptionError, RequestError, ServiceError, createClient, type ClientOptions, type ProspectClient, type RequestEvent } from '../../src/api/index.js';
import { ExitCode, exitCodeOf } from '../../src/exit-codes.js';
import { companiesPage, errorBody, failure, startScriptedServer, type Script, type ScriptedServer } from '../helpers/scripted-server.js';

const KEY = 'sk_live_DO_NOT_LEAK_7f3a9c';
const servers: ScriptedServer[] = [];
const clients: ProspectClient[] = [];

async function serve(script: Script): Promise<ScriptedServer> {
  const server = await startScriptedServer(script);
  servers.push(server);
  return server;
}

function clientFor(server: ScriptedServer, options: Partial<ClientOptions> = {}): ProspectClient {
  const client = createClient({ baseUrl: server.url, apiKey: KEY, retryBaseDelayMs: 1, timeoutMs: 300, maxRetries: 1, ...options });
  clients.push(client);
  return client;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
});


async function listAll(client: ProspectClient): Promise<void> {
  for await (const page of client.companies({ technology: 'Shopify' })) void page;
}

describe('redirects', () => {
  it.each([301, 302, 307, 308])('%i is not followed and the other origin gets nothing', async (status) => {
    const elsewhere = await serve([{ body: companiesPage(['stolen.com']) }]);
    const service = await serve([{ status, headers: { location: `${elsewhere.url}/api/v1/companies?technology=Shopify` } }]);
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
  it('to a non-loopback host is refused before any connection', () => {
    const started = performance.now();
    for (const baseUrl of ['http://example.invalid', 'http://192.0.2.1:4010', 'http://[2001:db8::1]']) {
      expect(() => createClient({ baseUrl, apiKey: KEY })).toThrow(ClientOptionError);
      expect(() => createClient({ baseUrl, apiKey: KEY })).toThrow(/refusing to send the API key over plain http/);
    }
    expect(performance.now() - started).toBeLessThan(100);
  });

  it('to loopback is allowed', async () => {
    const server = await serve([{ body: companiesPage(['a.com']) }]);
    const client = clientFor(server, { baseUrl: server.url.replace('127.0.0.1', 'localhost') });
    await listAll(client);
    expect(server.requests).toHaveLength(1);
  });

  it('the refusal happens before any socket: a listening trap gets no connection', async () => {
    // A host name that would resolve to the trap if the client ever connected.
    const trap = await listenTrap();
    expect(() => createClient({ baseUrl: `http://127.0.0.1.nip.io:${trap.port}`, apiKey: KEY })).toThrow(ClientOptionError);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(trap.connections).toBe(0);
    await trap.close();
  });
});

describe('the key never leaks', () => {
  const scenarios: Array<[string, Script, Partial<ClientOptions>?]> = [
    ['401 echoing the key', [{ status: 401, body: errorBody('unauthorized', `unknown key ${KEY}`, { key: KEY }) }]],
    ['403 echoing the key', [{ status: 403, body: errorBody('forbidden', `key ${KEY} is blocked`) }]],
    ['422 echoing the key', [{ status: 422, body: errorBody('no_match', `nothing for ${KEY}`, { suggestions: [KEY] }) }]],
    ['400 with a text body', [{ status: 400, body: `Bearer ${KEY} is malformed` }]],
    ['500 after retries', [{ status: 500, body: errorBody('internal_error', `crash while handling ${KEY}`) }]],
    ['429 with a long wait', [{ status: 429, headers: { 'retry-after': '999' }, body: errorBody('rate_limited', KEY) }]],
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

  it('verify and contacts errors too', async () => {
    const server = await serve([{ status: 401, body: errorBody('unauthorized', KEY) }]);
    const client = clientFor(server);
    for (const call of [client.verify('a@b.com'), client.contacts({ domains: ['a.com'] })]) {
      const error = await failure(call);
      expect(`${error.message} ${error.stack} ${JSON.stringify(error)} ${inspect(error, { depth: 8 })}`).not.toContain(KEY);
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

async function listenTrap(): Promise<{ port: number; connections: number; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  const state = { connections: 0 };
  const server: Server = createNetServer((socket) => {
    state.connections++;
    sockets.push(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    get connections() {
      return state.connections;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
