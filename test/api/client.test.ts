import { afterEach, describe, expect, it } from 'vitest';
import {
  MalformedResponseError,
  type ClientOptions,
  type CompanyPage,
  type ProspectClient,
} from '../../src/api/index.js';
import {
  clientOf,
  closeScripted,
  companiesPage,
  failure,
  sampleContact,
  serveScript,
  type Script,
  type ScriptedServer,
} from '../helpers/scripted-server.js';

const KEY = 'test-key-0123456789';
async function setup(
  script: Script,
  options: Partial<ClientOptions> = {},
): Promise<{ server: ScriptedServer; client: ProspectClient }> {
  const server = await serveScript(script);
  const client = clientOf(server, {
    baseUrl: `${server.url}/`,
    apiKey: KEY,
    retryBaseDelayMs: 1,
    timeoutMs: 2_000,
    random: () => 0.5,
    ...options,
  });
  return { server, client };
}

afterEach(closeScripted);

async function allPages(iterable: AsyncIterable<CompanyPage>): Promise<CompanyPage[]> {
  const pages: CompanyPage[] = [];
  for await (const page of iterable) pages.push(page);
  return pages;
}

describe('companies', () => {
  it('sends the key, the headers and the encoded query to /api/v1/companies', async () => {
    const { server, client } = await setup([companiesPage(['a.com'])].map((body) => ({ body })));
    await allPages(
      client.companies({
        technology: 'Shopify',
        notTechnology: 'WooCommerce',
        employeeRange: '11-500',
        country: 'united kingdom',
      }),
    );
    const [request] = server.requests;
    expect(request?.method).toBe('GET');
    expect(request?.path).toBe('/api/v1/companies');
    expect(request?.url).toContain('country=united%20kingdom');
    expect(Object.fromEntries(request?.query ?? [])).toEqual({
      technology: 'Shopify',
      not_technology: 'WooCommerce',
      employee_range: '11-500',
      country: 'united kingdom',
      limit: '1000',
    });
    expect(request?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request?.headers.accept).toBe('application/json');
    expect(request?.headers['user-agent']).toMatch(/^prospect-cli\/\d+\.\d+\.\d+/);
  });

  it('follows next_cursor with the configured parameter name until it is absent, null or ""', async () => {
    const script: Script = (request) => {
      const cursor = request.query.get('page_token');
      if (cursor === null) return { body: companiesPage(['a.com', 'b.com'], 'c1') };
      if (cursor === 'c1') return { body: companiesPage([], 'c 2/+') };
      if (cursor === 'c 2/+') return { body: companiesPage(['c.com'], '') };
      return { status: 400, body: { error: { code: 'invalid_cursor' } } };
    };
    const { server, client } = await setup(script, { cursorParam: 'page_token', pageSize: 2 });
    const pages = await allPages(client.companies({ technology: 'Shopify' }));
    expect(pages.map((page) => [page.cursor, page.nextCursor, page.data.map((row) => row.domain)])).toEqual([
      [null, 'c1', ['a.com', 'b.com']],
      ['c1', 'c 2/+', []],
      ['c 2/+', null, ['c.com']],
    ]);
    expect(server.requests.map((request) => request.query.get('limit'))).toEqual(['2', '2', '2']);
    expect(server.requests.some((request) => request.query.has('cursor'))).toBe(false);
    expect(pages[0]?.meta.scope).toBe('crux_rank <= 1000000');
  });

  it('with readAhead, asks for the next page when a body arrives, never more than one page ahead of the caller', async () => {
    // Five pages c0..c4. The caller takes a page only when the test says so, so what the client
    // asks for on its own is visible: on arrival of each request, which page the caller holds.
    const script: Script = (request) => {
      const page = Number(request.query.get('cursor')?.slice(1) ?? 0);
      return { body: companiesPage([`p${page}.com`], page < 4 ? `c${page + 1}` : null) };
    };
    const { server, client } = await setup(script);
    const pages = client.companies({ technology: 'Shopify' }, { readAhead: true })[Symbol.asyncIterator]();
    const taken: string[] = [];
    const requestsWhenTaken: number[] = [];
    for (let result = await pages.next(); !result.done; result = await pages.next()) {
      taken.push(result.value.data[0]!.domain);
      // Wait (as long as the test may) for the page read ahead, then give the client a moment to
      // run further ahead than it may before the next take.
      const expected = Math.min(taken.length + 1, 5);
      while (server.requests.length < expected) await new Promise((resolve) => setTimeout(resolve, 5));
      await new Promise((resolve) => setTimeout(resolve, 20));
      requestsWhenTaken.push(server.requests.length);
    }
    expect(taken).toEqual(['p0.com', 'p1.com', 'p2.com', 'p3.com', 'p4.com']);
    // Holding page k, the client has asked for page k+1 and no further (the last page has no next).
    expect(requestsWhenTaken).toEqual([2, 3, 4, 5, 5]);
    expect(server.requests.map((request) => request.query.get('cursor'))).toEqual([null, 'c1', 'c2', 'c3', 'c4']);
  });

  it('without readAhead, asks for a page only when the caller wants it', async () => {
    const script: Script = (request) => {
      const page = Number(request.query.get('cursor')?.slice(1) ?? 0);
      return { body: companiesPage([`p${page}.com`], page < 2 ? `c${page + 1}` : null) };
    };
    const { server, client } = await setup(script);
    const pages = client.companies({ technology: 'Shopify' })[Symbol.asyncIterator]();
    await pages.next();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.requests).toHaveLength(1);
    await pages.return?.();
  });

  it("a listing's signal withdraws its requests in flight, the page asked for ahead too", async () => {
    const script: Script = (request) =>
      request.query.has('cursor') ? { neverRespond: true } : { body: companiesPage(['a.com'], 'c1') };
    const { server, client } = await setup(script, { timeoutMs: 600_000 });
    const controller = new AbortController();
    const listing = client.companies({ technology: 'Shopify' }, { readAhead: true, signal: controller.signal });
    const pages = listing[Symbol.asyncIterator]();
    await pages.next();
    while (server.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    const waiting = pages.next();
    controller.abort();
    await expect(waiting).rejects.toThrow(/withdrawn: its listing was closed/);
    // Nothing was asked again: a withdrawn request is not retried.
    expect(server.requests).toHaveLength(2);
  });

  it('stops at a null next_cursor and at an absent one', async () => {
    for (const last of [null, undefined]) {
      const { server, client } = await setup([
        { body: companiesPage(['a.com'], 'x') },
        { body: companiesPage(['b.com'], last) },
      ]);
      expect(await allPages(client.companies({ technology: 't' }))).toHaveLength(2);
      expect(server.requests).toHaveLength(2);
    }
  });

  it('resumes from a start cursor', async () => {
    const { server, client } = await setup([{ body: companiesPage(['z.com'], null) }]);
    const pages = await allPages(client.companies({ technology: 't' }, { startCursor: 'saved' }));
    expect(pages[0]?.cursor).toBe('saved');
    expect(server.requests[0]?.query.get('cursor')).toBe('saved');
  });

  it('sends nothing until iterated, and stops asking when the consumer stops', async () => {
    const { server, client } = await setup([{ body: companiesPage(['a.com'], 'next') }]);
    const listing = client.companies({ technology: 't' });
    expect(server.requests).toHaveLength(0);
    for await (const page of listing) {
      expect(page.data).toHaveLength(1);
      break;
    }
    expect(server.requests).toHaveLength(1);
  });

  it('keeps unknown fields in rows', async () => {
    const page = companiesPage(['a.com']);
    (page.data as Record<string, unknown>[])[0]!.founded = 1999;
    const { client } = await setup([{ body: page }]);
    const [first] = await allPages(client.companies({ technology: 't' }));
    expect(first?.data[0]).toMatchObject({ founded: 1999 });
  });
});

describe('contacts', () => {
  it('sends domains, seniority and limit, and reads the envelope', async () => {
    const body = {
      data: [sampleContact('a.com'), { domain: 'b.com' }],
      meta: { source: { license: 'x' }, domains_requested: 2, limit: 50 },
      next_cursor: null,
    };
    const { server, client } = await setup([{ body }]);
    const result = await client.contacts({ domains: ['a.com', 'b.com'], seniority: ['cxo', 'vp'], limit: 50 });
    expect(server.requests[0]?.path).toBe('/api/v1/contacts');
    expect(Object.fromEntries(server.requests[0]?.query ?? [])).toEqual({
      domain: 'a.com,b.com',
      seniority: 'cxo,vp',
      limit: '50',
    });
    expect(result.data).toHaveLength(2);
    expect(result.data[1]?.business_email).toBeNull();
    expect(result.meta.domains_requested).toBe(2);
  });

  it('accepts a bare array', async () => {
    const { client } = await setup([{ body: [sampleContact('a.com')] }]);
    const result = await client.contacts({ domains: ['a.com'] });
    expect(result).toEqual({ data: [expect.objectContaining({ domain: 'a.com' })], meta: {} });
  });

  it('follows a non-empty next_cursor and keeps the first meta', async () => {
    const { server, client } = await setup([
      { body: { data: [sampleContact('a.com')], meta: { limit: 1 }, next_cursor: 'p2' } },
      { body: { data: [sampleContact('b.com')], meta: { limit: 2 }, next_cursor: '' } },
    ]);
    const result = await client.contacts({ domains: ['a.com', 'b.com'] });
    expect(result.data.map((contact) => contact.domain)).toEqual(['a.com', 'b.com']);
    expect(result.meta.limit).toBe(1);
    expect(server.requests[1]?.query.get('cursor')).toBe('p2');
    expect(server.requests[1]?.query.get('domain')).toBe('a.com,b.com');
  });

  it('follows a Link rel="next" as a listing of companies does, its query sent as given', async () => {
    const { server, client } = await setup((_request, index) =>
      index === 0
        ? {
            headers: { link: `<${server.url}/api/v1/contacts?domain=a.com,b.com&page=2>; rel="next"` },
            body: { data: [sampleContact('a.com')] },
          }
        : { body: { data: [sampleContact('b.com')] } },
    );
    const result = await client.contacts({ domains: ['a.com', 'b.com'] });
    expect(result.data.map((contact) => contact.domain)).toEqual(['a.com', 'b.com']);
    expect(server.requests[1]?.query.get('page')).toBe('2');
    expect(server.requests[1]?.query.has('cursor')).toBe(false);
  });

  it('has_more without a cursor is an error naming cursor-param, never a silently short answer', async () => {
    const { client } = await setup([{ body: { data: [sampleContact('a.com')], has_more: true } }]);
    const error = await failure(client.contacts({ domains: ['a.com'] }));
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect((error as MalformedResponseError).details).toMatchObject({ setting: 'cursor-param' });
  });

  it('an empty answer is fine for contacts', async () => {
    const { client } = await setup([{ body: { data: [], meta: {}, next_cursor: null } }]);
    expect((await client.contacts({ domains: ['nobody.com'] })).data).toEqual([]);
  });
});

describe('verify', () => {
  it('returns the data with the usage meta', async () => {
    const { server, client } = await setup([
      {
        body: {
          data: { email: 'a@b.com', status: 'valid', checked_at: '2025-06-01T00:00:00Z' },
          meta: { units_charged: 1, units_used: 7 },
        },
      },
    ]);
    const result = await client.verify('a@b.com');
    expect(result).toEqual({
      email: 'a@b.com',
      status: 'valid',
      status_raw: 'valid',
      status_known: true,
      checked_at: '2025-06-01T00:00:00Z',
      meta: { units_charged: 1, units_used: 7 },
    });
    expect(server.requests[0]?.url).toBe('/api/v1/verify?email=a%40b.com');
  });

  it('takes units from X-Units-Used when meta is missing, and maps another vocabulary, keeping its word', async () => {
    const { client } = await setup([
      {
        headers: { 'x-units-used': '3' },
        body: { data: { email: 'a@b.com', status: 'catch_all', checked_at: 'x', mx: 'ok' } },
      },
    ]);
    expect(await client.verify('a@b.com')).toEqual({
      email: 'a@b.com',
      status: 'risky',
      status_raw: 'catch_all',
      status_known: true,
      checked_at: 'x',
      mx: 'ok',
      meta: { units_used: 3 },
    });
  });

  it('accepts a bare result object', async () => {
    const { client } = await setup([{ body: { email: 'a@b.com', status: 'risky' } }]);
    expect(await client.verify('a@b.com')).toEqual({
      email: 'a@b.com',
      status: 'risky',
      status_raw: 'risky',
      status_known: true,
      checked_at: null,
    });
  });
});

describe('events and pool', () => {
  it('reports one event per attempt, without the key', async () => {
    const events: unknown[] = [];
    const { client } = await setup([{ status: 503 }, { body: companiesPage(['a.com']) }], {
      onRequest: (event) => events.push(event),
    });
    await allPages(client.companies({ technology: 't' }));
    expect(events).toEqual([
      expect.objectContaining({
        method: 'GET',
        endpoint: '/companies',
        attempt: 1,
        status: 503,
        retryInMs: 0,
        error: expect.any(String),
      }),
      expect.objectContaining({ attempt: 2, status: 200 }),
    ]);
    expect(JSON.stringify(events)).not.toContain(KEY);
  });

  it('reuses keep-alive connections', async () => {
    const { server, client } = await setup([{ body: { email: 'a@b.com', status: 'valid' } }], { connections: 1 });
    for (let i = 0; i < 5; i++) await client.verify('a@b.com');
    expect(server.requests).toHaveLength(5);
    expect(new Set(server.requests.map((request) => request.remotePort)).size).toBe(1);
  });

  it('runs requests in parallel up to the pool size', async () => {
    // The first four answers are held until four requests are in at once: a client that sent fewer
    // at a time would never get an answer (and fail by the test's timeout). After that, answers come
    // at once, and no request may arrive while four are still unanswered.
    let releaseFirstWave!: () => void;
    const firstWave = new Promise<void>((resolve) => (releaseFirstWave = resolve));
    const inFlightOnArrival: number[] = [];
    const { server, client } = await setup(
      (_request, index) => {
        inFlightOnArrival.push(index + 1 - server.answered());
        if (index === 3) releaseFirstWave();
        return { holdUntil: index < 4 ? firstWave : undefined, body: { email: 'a@b.com', status: 'valid' } };
      },
      { connections: 4 },
    );
    await Promise.all(Array.from({ length: 8 }, () => client.verify('a@b.com')));
    expect(server.requests).toHaveLength(8);
    expect(inFlightOnArrival.slice(0, 4)).toEqual([1, 2, 3, 4]);
    expect(Math.max(...inFlightOnArrival)).toBe(4);
    expect(new Set(server.requests.map((request) => request.remotePort)).size).toBe(4);
  });

  it('refuses to be used after close()', async () => {
    const { client } = await setup([]);
    await client.close();
    await expect(client.verify('a@b.com')).rejects.toThrow(/after close/);
  });
});
