/**
 * The client against the sandbox (the service simulation in src/sandbox): a full listing paged
 * through the client must equal the same listing paged with plain undici.request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createClient, type CompanyRow } from '../../src/api/index.js';
import { startSandbox, SANDBOX_KEYS, type RunningSandbox } from '../../src/sandbox/index.js';

const KEY = SANDBOX_KEYS.growth;

describe('client against the sandbox', () => {
  let sandbox: RunningSandbox;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, companies: 20_000, seed: 42 });
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  it('pages a full Shopify listing exactly like plain undici.request paging', async () => {
    const client = createClient({ baseUrl: sandbox.url, apiKey: KEY });
    const viaClient: CompanyRow[] = [];
    let pages = 0;
    try {
      for await (const page of client.companies({ technology: 'Shopify' })) {
        viaClient.push(...page.data);
        pages++;
      }
    } finally {
      await client.close();
    }

    const viaUndici = await pageWithUndici(sandbox.url, 'Shopify');
    expect(viaClient.length).toBeGreaterThan(0);
    expect(viaClient).toEqual(viaUndici);
    expect(new Set(viaClient.map((row) => row.domain)).size).toBe(viaClient.length);
    expect(pages).toBe(Math.max(1, Math.ceil(viaClient.length / 1000)));
  });
});

/** The reference: the contract's paging done by hand, no client code involved. */
async function pageWithUndici(baseUrl: string, technology: string): Promise<unknown[]> {
  const rows: unknown[] = [];
  let cursor: string | null = null;
  do {
    const url = new URL('/api/v1/companies', baseUrl);
    url.searchParams.set('technology', technology);
    url.searchParams.set('limit', '1000');
    if (cursor !== null) url.searchParams.set('cursor', cursor);
    const response = await request(url, { headers: { authorization: `Bearer ${KEY}` } });
    expect(response.statusCode).toBe(200);
    const body = (await response.body.json()) as { data: unknown[]; next_cursor?: string | null };
    rows.push(...body.data);
    cursor = body.next_cursor ? body.next_cursor : null;
  } while (cursor !== null);
  return rows;
}
