/**
 * The same seed gives the same bytes, across processes: two separate `prospect sandbox` processes
 * with one seed and snapshot day serve byte-identical pages, and each accepts the other's cursors
 * (resuming a run after an outage, on another sandbox, relies on it). Another seed gives other data,
 * and refuses those cursors. Separate processes, so no cached dataset object can hide a generator
 * that is not deterministic.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, qs, type RawResponse } from '../../helpers/independent-client.js';
import { SANDBOX_KEYS, spawnSandbox, TEST_AS_OF, type SandboxProcess } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.scale;
const args = (seed: number) => ['--port', '0', '--seed', String(seed), '--companies', '10000', '--as-of', TEST_AS_OF];

let a: SandboxProcess;
let b: SandboxProcess;
let other: SandboxProcess;
const urls: Record<'a' | 'b' | 'other', string> = { a: '', b: '', other: '' };

beforeAll(async () => {
  [a, b, other] = [spawnSandbox(args(11)), spawnSandbox(args(11)), spawnSandbox(args(12))];
  [urls.a, urls.b, urls.other] = await Promise.all([a.url, b.url, other.url]);
});
afterAll(async () => {
  await Promise.all([a, b, other].map((sandbox) => sandbox?.stop('SIGTERM')));
});

const get = (url: string, path: string): Promise<RawResponse> => call(url, path, { key: KEY });

const LISTINGS: Array<Record<string, string | number>> = [
  { technology: 'Shopify', limit: 200 },
  { technology: 'WordPress', country: 'germany', employee_range: '11-500', limit: 10 },
  { technology: 'jQuery', limit: 1000 },
];

/** A listing's first three pages, each asked of the given sandbox with the cursor the previous page gave. */
async function threePages(url: string, params: Record<string, string | number>): Promise<RawResponse[]> {
  const pages: RawResponse[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 3; page++) {
    const res = await get(url, `/api/v1/companies?${qs({ ...params, cursor })}`);
    pages.push(res);
    cursor = res.body?.next_cursor ?? undefined;
    if (!cursor) break;
  }
  return pages;
}

describe('determinism across processes', () => {
  it('two processes with the same seed serve byte-identical company pages, verify answers and contacts', async () => {
    for (const params of LISTINGS) {
      const [fromA, fromB] = await Promise.all([threePages(urls.a, params), threePages(urls.b, params)]);
      expect(fromA.map((res) => res.status)).toEqual(fromA.map(() => 200));
      expect(fromA.length).toBeGreaterThan(1);
      expect(fromB.map((res) => res.text)).toEqual(fromA.map((res) => res.text));
    }
    const verify = `/api/v1/verify?${qs({ email: 'jane.doe@example.com' })}`;
    expect((await get(urls.b, verify)).text).toBe((await get(urls.a, verify)).text);
    const domains = (await get(urls.a, '/api/v1/companies?technology=jQuery&limit=20')).body.data
      .map((row: { domain: string }) => row.domain)
      .join(',');
    const contacts = `/api/v1/contacts?${qs({ domain: domains, limit: 1000 })}`;
    const [contactsA, contactsB] = await Promise.all([get(urls.a, contacts), get(urls.b, contacts)]);
    expect(contactsA.body.data.length).toBeGreaterThan(0);
    expect(contactsB.text).toBe(contactsA.text);
  });

  it("each accepts the other's cursors, and continues the listing with the same bytes", async () => {
    let crossedBack = 0;
    for (const params of LISTINGS) {
      const first = await get(urls.a, `/api/v1/companies?${qs(params)}`);
      const cursor: string = first.body.next_cursor;
      expect(typeof cursor).toBe('string');
      const [nextFromA, nextFromB] = await Promise.all([
        get(urls.a, `/api/v1/companies?${qs({ ...params, cursor })}`),
        get(urls.b, `/api/v1/companies?${qs({ ...params, cursor })}`),
      ]);
      expect(nextFromB.status, nextFromB.text).toBe(200);
      expect(nextFromB.text).toBe(nextFromA.text);
      // And the other way round, one page further, where the listing has one.
      const further: string | null = nextFromB.body.next_cursor;
      if (further === null) continue;
      crossedBack++;
      const [afterFromA, afterFromB] = await Promise.all([
        get(urls.a, `/api/v1/companies?${qs({ ...params, cursor: further })}`),
        get(urls.b, `/api/v1/companies?${qs({ ...params, cursor: further })}`),
      ]);
      expect(afterFromA.status, afterFromA.text).toBe(200);
      expect(afterFromA.text).toBe(afterFromB.text);
    }
    expect(crossedBack).toBeGreaterThan(0);
  });

  it('another seed gives other data, and refuses the cursors of the first', async () => {
    const path = `/api/v1/companies?${qs(LISTINGS[0]!)}`;
    const [fromA, fromOther] = await Promise.all([get(urls.a, path), get(urls.other, path)]);
    expect(fromOther.status).toBe(200);
    expect(fromOther.text).not.toBe(fromA.text);
    const foreign = await get(
      urls.other,
      `/api/v1/companies?${qs({ ...LISTINGS[0]!, cursor: fromA.body.next_cursor })}`,
    );
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.code).toBe('invalid_cursor');
  });
});
