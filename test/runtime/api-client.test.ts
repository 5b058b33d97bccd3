/**
 * createApiClient gives every client of one connection one pacer (issue 27): a run's paid calls
 * (JobDeps.paidClient) and its contact calls keep to one pace, so a 429 that one of them meets holds
 * the other back too, as one polite client would, instead of the other storming on into the limit.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { runtimeDeps } from '../../src/runtime/job-deps.js';
import { createApiClient } from '../../src/runtime/api-client.js';
import type { Connection } from '../../src/runtime/connection.js';
import type { RunContext } from '../../src/runtime/context.js';
import { Reporter } from '../../src/ui/reporter.js';
import { call, SANDBOX_KEYS, withSandbox } from '../helpers/sandbox.js';
import { closeScripted, serveScript, type ScriptedResponse } from '../helpers/scripted-server.js';

const KEY = SANDBOX_KEYS.growth;

afterEach(closeScripted);

function connectionTo(url: string): Connection {
  return {
    baseUrl: url,
    apiKey: KEY,
    sandbox: false,
    serviceIdentity: url,
    baseUrlSource: 'PROSPECT_BASE_URL',
    proxy: { proxy: undefined, why: 'none set' },
    trust: { ca: undefined, description: "Node's own" },
  };
}

/** A run's context whose --debug lines (one per attempt) go to `debug`. */
function contextWith(debug: PassThrough, cleanups: Array<() => Promise<void> | void>): RunContext {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: {},
    global: { debug: true },
    signal: new AbortController().signal,
    reporter: new Reporter({ stderr: debug, stderrIsTTY: false, verbose: false, quiet: false, debug: true }),
    onCleanup: (task) => void cleanups.push(task),
  };
}

describe('createApiClient', () => {
  it('gives the paid calls the pace of the contact calls of the same connection: a 429 holds both back', async () => {
    // Real answers of the sandbox, replayed by a scripted server that answers the first contacts call 429.
    const [contacts, verified] = await withSandbox({}, (sandbox) =>
      Promise.all([
        call(sandbox.url, '/api/v1/contacts?domain=valleyharbor.com', { key: KEY }),
        call(sandbox.url, '/api/v1/verify?email=patricia.hughes%40valleyharbor.com', { key: KEY }),
      ]),
    );
    expect([contacts.status, verified.status]).toEqual([200, 200]);
    const server = await serveScript((request, index): ScriptedResponse => {
      if (request.path.endsWith('/verify'))
        return { body: verified.text, headers: { 'content-type': 'application/json' } };
      if (index === 0)
        return {
          status: 429,
          headers: { 'retry-after': '1' },
          body: { error: { code: 'rate_limited', message: 'slow down' } },
        };
      return { body: contacts.text, headers: { 'content-type': 'application/json' } };
    });
    const debug = new PassThrough();
    let debugText = '';
    const rateLimited = new Promise<void>((resolve) =>
      debug.on('data', (chunk: Buffer) => {
        debugText += chunk.toString('utf8');
        if (/-> 429/.test(debugText)) resolve();
      }),
    );
    const cleanups: Array<() => Promise<void> | void> = [];
    const ctx = contextWith(debug, cleanups);
    const connection = connectionTo(server.url);
    try {
      const listed = createApiClient(ctx, connection).contacts({ domains: ['valleyharbor.com'] });
      // The contact call has met its 429 and waits out Retry-After; now a paid call is asked for.
      await rateLimited;
      const paid = runtimeDeps(ctx).paidClient(connection).verify('patricia.hughes@valleyharbor.com');
      await Promise.all([listed, paid]);
    } finally {
      for (const cleanup of cleanups) await cleanup();
    }
    // One pace: the paid call waited its turn behind the retried contact call, instead of going out during the pause.
    expect(server.requests.map((request) => request.path.replace('/api/v1', ''))).toEqual([
      '/contacts',
      '/contacts',
      '/verify',
    ]);
  });
});
