/**
 * The client against the sandbox (the service simulation in src/sandbox): a full listing paged
 * through the client must equal the same listing paged with plain undici.request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type CompanyRow } from '../../src/api/index.js';
import { allCompanies } from '../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;

describe('client against the sandbox', () => {
  let sandbox: RunningSandbox;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ companies: 20_000, seed: 42 });
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

    const viaUndici = await allCompanies(sandbox.url, KEY, { technology: 'Shopify' });
    expect(viaClient.length).toBeGreaterThan(0);
    expect(viaClient).toEqual(viaUndici);
    expect(new Set(viaClient.map((row) => row.domain)).size).toBe(viaClient.length);
    expect(pages).toBe(Math.max(1, Math.ceil(viaClient.length / 1000)));
  });
});
