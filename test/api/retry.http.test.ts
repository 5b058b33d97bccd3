import { afterEach, describe, expect, it, vi } from 'vitest';
import { createServer } from 'node:net';
import {
  AbortedError,
  AuthError,
  BadRequestError,
  MalformedResponseError,
  ServiceError,
  UnanswerableError,
  createClient,
  type ClientOptions,
  type CompanyPage,
  type ProspectClient,
  type RequestEvent,
} from '../../src/api/index.js';
import { ExitCode, exitCodeOf } from '../../src/exit-codes.js';
import {
  clientOf,
  closeScripted,
  companiesPage,
  errorBody,
  failure,
  serveScript,
  type Script,
  type ScriptedResponse,
  type ScriptedServer,
} from '../helpers/scripted-server.js';

const KEY = 'retry-key-ABCDEF123456';
/** The client of the running test (closed by closeScripted after it), and what it reported. */
let client: ProspectClient | undefined;
let events: RequestEvent[] = [];

async function setup(
  script: Script,
  options: Partial<ClientOptions> = {},
): Promise<{ server: ScriptedServer; client: ProspectClient }> {
  const server = await serveScript(script);
  events = [];
  client = clientOf(server, {
    apiKey: KEY,
    retryBaseDelayMs: 5,
    timeoutMs: 1_000,
    random: () => 1 - Number.EPSILON,
    onRequest: (event) => events.push(event),
    ...options,
  });
  return { server, client };
}

afterEach(async () => {
  await closeScripted();
  client = undefined;
});

async function firstPage(c: ProspectClient): Promise<CompanyPage> {
  for await (const page of c.companies({ technology: 'Shopify' })) return page;
  throw new Error('no page');
}

const ok: ScriptedResponse = { body: companiesPage(['a.com']) };

describe('retries recover', () => {
  it.each([500, 502, 503, 504, 408, 429])('from %i', async (status) => {
    const { server, client } = await setup([{ status, body: errorBody('internal_error', 'boom') }, ok]);
    expect((await firstPage(client)).data).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('from a connection reset (ECONNRESET)', async () => {
    const { server, client } = await setup([{ resetConnection: true }, ok]);
    expect((await firstPage(client)).data).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
    expect(events[0]?.error).toMatch(/ECONNRESET|UND_ERR_SOCKET/);
  });

  it('from a connection closed before the answer', async () => {
    const { server, client } = await setup([{ closeConnection: true }, ok]);
    expect((await firstPage(client)).data).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('from a socket destroyed mid-body', async () => {
    const { server, client } = await setup([{ destroyMidBody: true, body: companiesPage(['a.com', 'b.com']) }, ok]);
    expect((await firstPage(client)).data).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
    expect(events[0]).toMatchObject({ status: 200, attempt: 1 });
  });

  it('from a timeout waiting for headers', async () => {
    const { server, client } = await setup([{ neverRespond: true }, ok], { timeoutMs: 150 });
    const started = performance.now();
    expect((await firstPage(client)).data).toHaveLength(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(server.requests).toHaveLength(2);
    expect(events[0]?.error).toMatch(/^timeout: /);
  });

  it('a timeout at every attempt: each attempt is said as the error says the last one', async () => {
    const { server, client } = await setup([{ neverRespond: true }], { timeoutMs: 150, maxRetries: 1 });
    const error = await firstPage(client).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ServiceError);
    expect(server.requests).toHaveLength(2);
    const { reason, message } = error as ServiceError;
    expect(reason).toBe('timeout: no complete answer within 150 ms');
    expect(message).toContain(`(last: ${reason})`);
    expect(events.map((event) => event.error)).toEqual([reason, reason]);
  });

  it('from a body that stalls past the timeout', async () => {
    const { server, client } = await setup([{ stallMidBodyMs: 2_000, body: companiesPage(['a.com']) }, ok], {
      timeoutMs: 150,
    });
    expect((await firstPage(client)).data).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('from a body that trickles slower than the whole-attempt deadline', async () => {
    // Each chunk arrives within the idle timeout, yet the whole body takes longer than timeoutMs:
    // only the per-attempt deadline catches it.
    const { server, client } = await setup(
      [{ delayMs: 150, stallMidBodyMs: 150, body: companiesPage(['a.com']) }, ok],
      { timeoutMs: 250 },
    );
    expect((await firstPage(client)).data).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('from connection refused', async () => {
    const port = await freePort();
    const c = createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY, retryBaseDelayMs: 1, maxRetries: 2 });
    const error = await failure(firstPage(c));
    await c.close();
    expect(error).toBeInstanceOf(ServiceError);
    expect(error.message).toMatch(
      new RegExp(
        String.raw`^no answer from 127\.0\.0\.1:\d+ for /companies after 3 attempts ` +
          String.raw`\(last: refused: connection refused \(ECONNREFUSED\)\)$`,
      ),
    );
  });
});

describe('429s and --max-retries', () => {
  it('429s use up no retries: three 429s, then a 503, then the answer, with maxRetries 1', async () => {
    const limited: ScriptedResponse = { status: 429, body: errorBody('rate_limited', 'slow down') };
    const { server, client } = await setup([limited, limited, limited, { status: 503 }, ok], { maxRetries: 1 });
    expect((await firstPage(client)).data).toHaveLength(1);
    expect(server.requests).toHaveLength(5);
  });

  it("a 429 without Retry-After is asked again after the pacer's pause, not after the backoff", async () => {
    const { server, client } = await setup([{ status: 429, body: errorBody('rate_limited', 'slow down') }, ok], {
      retryBaseDelayMs: 60_000,
    });
    await firstPage(client);
    expect(server.requests).toHaveLength(2);
    // The wait the client chose, not the backoff's 60 s: its own event says it. It is what is left of
    // the pacer's first pause (400 ms, the spacing its ramp starts at) when the event is written, so a
    // busy machine may show 399.
    expect(events[0]?.retryInMs).toBeGreaterThan(300);
    expect(events[0]?.retryInMs).toBeLessThanOrEqual(400);
  });
});

describe('Retry-After', () => {
  it('429 waits at least Retry-After seconds', async () => {
    const { server, client } = await setup(
      [
        {
          status: 429,
          headers: { 'retry-after': '1' },
          body: errorBody('rate_limited', 'slow down', { retry_after: 1 }),
        },
        ok,
      ],
      {
        random: () => 0,
      },
    );
    const started = performance.now();
    await firstPage(client);
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
    expect(server.requests).toHaveLength(2);
    // A 429's wait is the pacer's pause, as much of it as is left when the event is written (999 on a busy machine).
    expect(events[0]?.retryInMs).toBeGreaterThan(500);
    expect(events[0]?.retryInMs).toBeLessThanOrEqual(1000);
  });

  it('honours an HTTP-date', async () => {
    // An HTTP-date has whole seconds: 30 s ahead is a wait of 29 to 30 s, less the time until the
    // client reads it. The client is closed as soon as it says how long it will wait, so nothing waits.
    const at = new Date(Date.now() + 30_000).toUTCString();
    const { server } = await setup([{ status: 503, headers: { 'retry-after': at } }, ok], {
      random: () => 0,
      maxRetryDelayMs: 60_000,
      onRequest: (event) => {
        events.push(event);
        void client?.close();
      },
    });
    expect((await failure(firstPage(client!))).message).toMatch(/closed while a request was in flight/);
    const waited = events[0]?.retryInMs ?? 0;
    // 5 s of room for a slow machine between writing the date and the client reading it.
    expect(waited).toBeGreaterThan(24_000);
    expect(waited).toBeLessThanOrEqual(30_000);
    expect(server.requests).toHaveLength(1);
  });

  it('uses retry_after from the body when the header is missing', async () => {
    const { client } = await setup(
      [{ status: 429, body: errorBody('rate_limited', 'slow', { retry_after: 0.2 }) }, ok],
      { random: () => 0 },
    );
    await firstPage(client);
    // The body's 0.2 s, as much of it as is left when the event is written (193 was seen); the backoff would be 0.
    expect(events[0]?.retryInMs).toBeGreaterThan(100);
    expect(events[0]?.retryInMs).toBeLessThanOrEqual(200);
  });

  it('gives up at once when it asks for longer than the cap', async () => {
    const { server, client } = await setup(
      [{ status: 429, headers: { 'retry-after': '120' }, body: errorBody('rate_limited', 'slow down') }],
      {
        maxRetryDelayMs: 10_000,
      },
    );
    const error = await failure(firstPage(client));
    expect(error).toBeInstanceOf(ServiceError);
    expect(error.message).toBe(
      'the service asked to wait 120 s before asking /companies again (rate limit: 429 rate_limited), ' +
        'longer than prospect waits (10 s); try again later',
    );
    expect(server.requests).toHaveLength(1);
  });

  it.each([429, 503])(
    'a %i meets the one cap: a Retry-After of the cap is waited, a longer one is not',
    async (status) => {
      const asked = (seconds: string): ScriptedResponse => ({
        status,
        headers: { 'retry-after': seconds },
        body: errorBody(status === 429 ? 'rate_limited' : 'unavailable', 'wait'),
      });
      const waited = await setup([asked('0.2'), ok], { maxRetryDelayMs: 200 });
      expect((await firstPage(waited.client)).data).toHaveLength(1);
      expect(waited.server.requests).toHaveLength(2);
      const refused = await setup([asked('0.3'), ok], { maxRetryDelayMs: 200 });
      expect((await failure(firstPage(refused.client))).message).toMatch(/^the service asked to wait 300 ms before/);
      expect(refused.server.requests).toHaveLength(1);
    },
  );
});

describe('not retried', () => {
  it.each([
    [400, BadRequestError, ExitCode.usage],
    [401, AuthError, ExitCode.auth],
    [403, AuthError, ExitCode.auth],
    [404, BadRequestError, ExitCode.usage],
    [422, UnanswerableError, ExitCode.unanswerable],
    [405, ServiceError, ExitCode.service],
    [409, ServiceError, ExitCode.service],
  ])('%i', async (status, cls, exitCode) => {
    // A 422 needs a code the client reads as the contract's (docs/api-contract.md row 7c).
    const code = status === 422 ? 'no_match' : 'some_code';
    const { server, client } = await setup([{ status, body: errorBody(code, 'some reason') }, ok]);
    const error = await failure(firstPage(client));
    expect(error).toBeInstanceOf(cls);
    expect(exitCodeOf(error)).toBe(exitCode);
    expect(server.requests).toHaveLength(1);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ status, attempt: 1 });
    expect(events[0]?.retryInMs).toBeUndefined();
  });

  it('403 plan_required on contacts', async () => {
    const { client } = await setup([{ status: 403, body: errorBody('plan_required', 'Growth plan needed') }]);
    const error = await failure(client.contacts({ domains: ['a.com'] }));
    expect(error.message).toBe(
      "the contacts endpoint needs the Growth plan or higher; this key's plan does not include it (403 plan_required).",
    );
  });

  it('422 with a non-JSON body is a broken contract, exit 5, not retried', async () => {
    const { client, server } = await setup([{ status: 422, body: 'nope' }]);
    const error = await failure(firstPage(client));
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect(exitCodeOf(error)).toBe(5);
    expect(error.message).toMatch(
      /^the service refused the request \(422\) without the reason the specification promises/,
    );
    expect(server.requests).toHaveLength(1);
  });
});

describe('retry cap', () => {
  it('gives up after maxRetries + 1 attempts with exit 5 and the count', async () => {
    const { server, client } = await setup(
      [{ status: 503, body: errorBody('internal_error', 'down for maintenance') }],
      { maxRetries: 3 },
    );
    const error = await failure(firstPage(client));
    expect(error).toBeInstanceOf(ServiceError);
    expect(exitCodeOf(error)).toBe(ExitCode.service);
    expect((error as ServiceError).attempts).toBe(4);
    expect(error.message).toBe(
      `no answer from 127.0.0.1:${new URL(server.url).port} for /companies after 4 attempts ` +
        `(last: 503 internal_error "down for maintenance")`,
    );
    expect(server.requests).toHaveLength(4);
    expect(events.map((event) => event.attempt)).toEqual([1, 2, 3, 4]);
    expect(events[3]?.retryInMs).toBeUndefined();
  });

  it('waits the full-jitter schedule between attempts', async () => {
    const { client } = await setup([{ status: 500 }], { maxRetries: 4, retryBaseDelayMs: 10, random: () => 0.5 });
    await failure(firstPage(client));
    expect(events.map((event) => event.retryInMs)).toEqual([5, 10, 20, 40, undefined]);
  });

  it('a timeout on every attempt', async () => {
    const { client } = await setup([{ neverRespond: true }], { maxRetries: 1, timeoutMs: 100 });
    const error = await failure(firstPage(client));
    expect(error).toBeInstanceOf(ServiceError);
    expect(error.message).toMatch(/after 2 attempts \(last: timeout: no complete answer within 100 ms\)/);
  });
});

describe('malformed answers', () => {
  it.each<[string, ScriptedResponse, RegExp]>([
    [
      'HTML with status 200',
      { body: '<!doctype html><html><body>Login</body></html>' },
      /^the service at 127\.0\.0\.1:\d+ answered \/companies with HTML, not JSON \(status 200\)$/,
    ],
    [
      'truncated JSON',
      { body: '{"data":[{"domain":"a.com"', headers: { 'content-type': 'application/json' } },
      /^the service at 127\.0\.0\.1:\d+ answered \/companies with truncated or invalid JSON \(status 200\)/,
    ],
    [
      'an empty body',
      { body: '' },
      /^the service at 127\.0\.0\.1:\d+ answered \/companies with an empty body \(status 200\)$/,
    ],
    [
      'the wrong shape',
      // Two arrays and no `data`: which holds the rows cannot be told (one alone would be read as them).
      { body: { rows: [], more: [] } },
      /^the service at 127\.0\.0\.1:\d+ answered \/companies with an unexpected shape \(status 200\): data: /,
    ],
    [
      'data not an array',
      { body: { ...companiesPage([]), data: 'none' } },
      /unexpected shape \(status 200\): data: Invalid input: expected array, received string$/,
    ],
  ])('%s → MalformedResponseError after two retries', async (_name, response, message) => {
    const { server, client } = await setup([response]);
    const error = await failure(firstPage(client));
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect(exitCodeOf(error)).toBe(ExitCode.service);
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain('\n');
    expect(server.requests).toHaveLength(3);
  });

  it('a transient HTML page is retried and recovers', async () => {
    const { server, client } = await setup([{ body: '<html>proxy hiccup</html>' }, ok]);
    expect((await firstPage(client)).data).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('an empty first page is reported, not retried', async () => {
    const { server, client } = await setup([{ body: companiesPage([], null) }]);
    const error = await failure(firstPage(client));
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect(error.message).toBe('the service returned an empty first page for /companies instead of a 422');
    expect(server.requests).toHaveLength(1);
  });

  it('a cursor loop stops the listing', async () => {
    const { client } = await setup([
      { body: companiesPage(['a.com'], 'c1') },
      { body: companiesPage(['b.com'], 'c2') },
      { body: companiesPage(['c.com'], 'c1') },
    ]);
    const seen: string[] = [];
    const error = await failure(
      (async () => {
        for await (const page of client.companies({ technology: 't' }))
          seen.push(...page.data.map((row) => row.domain));
      })(),
    );
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect(error.message).toMatch(/same cursor twice/);
    expect(seen).toEqual(['a.com', 'b.com']);
  });
});

describe('verify is never asked again after an answer', () => {
  it('a malformed 200 is not retried', async () => {
    const { server, client } = await setup([
      { body: '<html>oops</html>' },
      { body: { email: 'a@b.com', status: 'valid' } },
    ]);
    const error = await failure(client.verify('a@b.com'));
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect(server.requests).toHaveLength(1);
  });

  it('a 200 is never re-asked, but a network loss and a 5xx are', async () => {
    const { server, client } = await setup([
      { status: 503 },
      { resetConnection: true },
      { body: { email: 'a@b.com', status: 'valid' } },
    ]);
    expect((await client.verify('a@b.com')).status).toBe('valid');
    expect(server.requests).toHaveLength(3);
    expect((await client.verify('a@b.com')).status).toBe('valid');
    expect(server.requests).toHaveLength(4);
  });
});

describe('a paid call hears of each answer lost after sending, and retries only with leave', () => {
  const VALID = { email: 'a@b.com', status: 'valid' };
  function watch(allow: boolean[]) {
    const heard = { lost: 0, asked: 0 };
    return {
      heard,
      paid: {
        answerLost: () => void (heard.lost += 1),
        mayRetry: () => allow[heard.asked++] ?? false,
      },
    };
  }

  it('a 5xx costs nothing and needs no leave; a 200 cut mid-body is lost, and no leave ends the request', async () => {
    const { server, client } = await setup([{ status: 503 }, { body: VALID, destroyMidBody: true }, { body: VALID }]);
    const { heard, paid } = watch([false]);
    const error = await failure(client.verify('a@b.com', { idempotencyKey: 'k-1', paid }));
    expect(error.message).toMatch(/after 2 attempts/);
    expect(server.requests).toHaveLength(2);
    expect(heard).toEqual({ lost: 1, asked: 1 });
    expect(server.requests.map((request) => request.headers['idempotency-key'])).toEqual(['k-1', 'k-1']);
  });

  it('a broken gzip body and truncated JSON in a 200 are lost answers, asked again with the same key', async () => {
    const { server, client } = await setup([
      { headers: { 'content-encoding': 'gzip' }, body: 'not gzip at all' },
      { headers: { 'content-type': 'application/json' }, body: '{"email":"a@b.com","sta' },
      { headers: { 'idempotent-replayed': 'true' }, body: VALID },
    ]);
    const { heard, paid } = watch([true, true]);
    const answer = await client.verify('a@b.com', { idempotencyKey: 'k-2', paid });
    expect(answer.status).toBe('valid');
    expect(answer.idempotency).toBe('replayed');
    expect(heard).toEqual({ lost: 2, asked: 2 });
    expect(server.requests).toHaveLength(3);
  });

  it('a refused connection was never sent: not lost', async () => {
    const { server, client } = await setup([{ resetConnection: true }, { body: VALID }]);
    const { heard, paid } = watch([]);
    // A reset before any answer may follow a request the service read: lost, and here no leave is given.
    await failure(client.verify('a@b.com', { idempotencyKey: 'k-3', paid }));
    expect(heard.lost).toBe(1);
    expect(server.requests).toHaveLength(1);
    const closed = await setup([]);
    await closed.server.close();
    const none = watch([]);
    await failure(closed.client.verify('a@b.com', { idempotencyKey: 'k-4', paid: none.paid }));
    expect(none.heard).toEqual({ lost: 0, asked: 0 });
  });
});

describe('abort', () => {
  // In these four the attempt (or the wait) is far longer than the test may run, so only the abort or
  // close() can end it: one that did not would fail the test by its timeout, however fast the machine.
  const FOREVER = { timeoutMs: 600_000, maxRetryDelayMs: 600_000 };
  const UNTIL = { timeout: 20_000, interval: 5 };

  it('aborting stops an attempt in flight with AbortedError (exit 130)', async () => {
    const controller = new AbortController();
    const { server, client } = await setup([{ neverRespond: true }], { signal: controller.signal, ...FOREVER });
    const pending = failure(firstPage(client));
    await vi.waitFor(() => expect(server.requests).toHaveLength(1), UNTIL);
    controller.abort();
    const error = await pending;
    expect(error).toBeInstanceOf(AbortedError);
    expect(exitCodeOf(error)).toBe(ExitCode.interrupted);
  });

  it('aborting interrupts a backoff wait', async () => {
    const controller = new AbortController();
    const { server, client } = await setup([{ status: 503, headers: { 'retry-after': '300' } }], {
      signal: controller.signal,
      ...FOREVER,
    });
    const pending = failure(firstPage(client));
    await vi.waitFor(() => expect(events[0]?.retryInMs).toBe(300_000), UNTIL);
    controller.abort();
    expect(await pending).toBeInstanceOf(AbortedError);
    expect(server.requests).toHaveLength(1);
  });

  it('close() stops a request in flight and its retries', async () => {
    const { server, client } = await setup([{ neverRespond: true }], FOREVER);
    const pending = failure(firstPage(client));
    await vi.waitFor(() => expect(server.requests).toHaveLength(1), UNTIL);
    await client.close();
    const error = await pending;
    expect(error.message).toMatch(/closed while a request was in flight/);
    expect(server.requests).toHaveLength(1);
  });

  it('close() cuts a backoff wait short', async () => {
    const { server, client } = await setup([{ status: 503, headers: { 'retry-after': '300' } }], FOREVER);
    const pending = failure(firstPage(client));
    await vi.waitFor(() => expect(events[0]?.retryInMs).toBe(300_000), UNTIL);
    await client.close();
    expect((await pending).message).toMatch(/closed while a request was in flight/);
    expect(server.requests).toHaveLength(1);
  });

  it('an aborted signal sends nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    const { server, client } = await setup([ok], { signal: controller.signal });
    expect(await failure(firstPage(client))).toBeInstanceOf(AbortedError);
    expect(server.requests).toHaveLength(0);
  });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
