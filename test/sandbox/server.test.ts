/** Authentication, routing and robustness: every malformed request gets a JSON error, the process lives on. */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, SANDBOX_KEYS, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(() => sandbox.close());

const ok = '/api/v1/companies?technology=Shopify&limit=1';

/** Sends raw bytes and returns the raw answer (for requests a normal client would refuse to send). */
function raw(bytes: string): Promise<string> {
  const { port, hostname } = new URL(sandbox.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('utf8')));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('timeout')));
  });
}

describe('authentication', () => {
  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['the Basic scheme', `Basic ${Buffer.from('sandbox-growth:').toString('base64')}`],
    ['a bare key', SANDBOX_KEYS.growth],
    ['an unknown key', 'Bearer sandbox-enterprise'],
    ['a key with extra words', `Bearer ${SANDBOX_KEYS.growth} extra`],
  ])('401 unauthorized for %s, without echoing what was sent', async (_, authorization) => {
    const res = await call(sandbox.url, ok, authorization === undefined ? {} : { authorization });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(res.text).not.toMatch(/sandbox-(growth|enterprise)/);
  });

  it('accepts every sandbox key and a lower-case scheme', async () => {
    for (const key of Object.values(SANDBOX_KEYS)) expect((await call(sandbox.url, ok, { key })).status).toBe(200);
    expect((await call(sandbox.url, ok, { authorization: `bearer ${SANDBOX_KEYS.scale}` })).status).toBe(200);
  });
});

describe('routing and methods', () => {
  it.each(['/', '/api/v1', '/api/v1/companies/', '/api/v2/companies', '/api/v1/unknown', '/v1/companies'])(
    '404 not_found for %s',
    async (path) => {
      const res = await call(sandbox.url, path, { key: SANDBOX_KEYS.growth });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    },
  );

  it.each(['POST', 'PUT', 'DELETE', 'PATCH'])('405 method_not_allowed for %s, with Allow', async (method) => {
    const res = await call(sandbox.url, ok, { key: SANDBOX_KEYS.growth, method });
    expect(res.status).toBe(405);
    expect(res.body.error.code).toBe('method_not_allowed');
    expect(res.headers.allow).toBe('GET, HEAD');
  });

  it('answers HEAD like GET without a body', async () => {
    const get = await call(sandbox.url, ok, { key: SANDBOX_KEYS.growth });
    const head = await call(sandbox.url, ok, { key: SANDBOX_KEYS.growth, method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(get.text)));
  });
});

describe('robustness', () => {
  it('answers a request line over 64 KiB with a JSON 431 and keeps serving', async () => {
    const answer = await raw(`GET /api/v1/companies?technology=${'x'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.code).toBe('request_too_large');
    expect((await call(sandbox.url, ok, { key: SANDBOX_KEYS.growth })).status).toBe(200);
  });

  it('answers unparseable HTTP with a JSON 400', async () => {
    const answer = await raw('THIS IS NOT HTTP\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.code).toBe('bad_request');
  });

  it('handles long but legal queries and odd encodings without crashing', async () => {
    const long = await call(sandbox.url, `/api/v1/companies?technology=${encodeURIComponent('é'.repeat(5000))}`, {
      key: SANDBOX_KEYS.growth,
    });
    expect(long.status).toBe(422);
    const nul = await call(sandbox.url, '/api/v1/companies?technology=%00', { key: SANDBOX_KEYS.growth });
    expect(nul.status).toBe(422);
    const bareName = await call(sandbox.url, '/api/v1/companies?technology', { key: SANDBOX_KEYS.growth });
    expect(bareName.body.error.code).toBe('missing_parameter');
  });

  it('keeps connections alive for pooling clients', async () => {
    const res = await call(sandbox.url, ok, { key: SANDBOX_KEYS.growth });
    expect(res.headers.connection).toBe('keep-alive');
    expect(res.headers['keep-alive']).toMatch(/timeout=\d+/);
  });

  it('counts requests by endpoint in /_sandbox/stats (which needs no key and does not count itself)', async () => {
    const before = (await call(sandbox.url, '/_sandbox/stats')).body;
    await call(sandbox.url, ok, { key: SANDBOX_KEYS.growth });
    await call(sandbox.url, '/api/v1/contacts?domain=a.com', { key: SANDBOX_KEYS.growth });
    await call(sandbox.url, '/nowhere');
    const after = (await call(sandbox.url, '/_sandbox/stats')).body;
    expect(after.requests).toEqual({
      total: before.requests.total + 3,
      companies: before.requests.companies + 1,
      countries: before.requests.countries,
      contacts: before.requests.contacts + 1,
      verify: before.requests.verify,
      other: before.requests.other + 1,
    });
    expect(sandbox.stats()).toEqual(after);
  });

  it('lists the domains /contacts carried and the addresses charged only with --record-traffic', async () => {
    await call(sandbox.url, '/api/v1/contacts?domain=a.com', { key: SANDBOX_KEYS.growth });
    const plain = (await call(sandbox.url, '/_sandbox/stats')).body;
    expect(plain).not.toHaveProperty('contacts_domains');
    expect(plain).not.toHaveProperty('verified_emails');

    const recording = await startTestSandbox({ companies: 1_000, recordTraffic: true });
    try {
      await call(recording.url, '/api/v1/contacts?domain=b.com,a.com', { key: SANDBOX_KEYS.growth });
      await call(recording.url, `/api/v1/verify?email=${encodeURIComponent('Someone@Example.com')}`, {
        key: SANDBOX_KEYS.growth,
      });
      const stats = (await call(recording.url, '/_sandbox/stats')).body;
      expect(stats.contacts_domains).toEqual(['a.com', 'b.com']);
      expect(stats.verified_emails).toEqual(['someone@example.com']);
    } finally {
      await recording.close();
    }
  });
});
