/**
 * The client against the sandbox (the service simulation in src/sandbox): a full listing paged
 * through the client must equal the same listing paged with plain undici.request.
 *
 * The sandbox is built in parallel with this client; until src/sandbox/index.ts exists this file
 * skips itself. It expects `startSandbox({ port: 0, companies, seed })` → `{ url, close(), stats() }`
 * and the key `sandbox-growth` (docs/api-contract.md row 24).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createClient, type CompanyRow } from '../../src/api/index.js';

interface SandboxHandle {
  url: string;
  close(): Promise<void>;
  stats(): unknown;
}
type StartSandbox = (options: { port: number; companies: number; seed: number | string }) => Promise<SandboxHandle>;

const sandboxModule = fileURLToPath(new URL('../../src/sandbox/index.ts', import.meta.url));
const sandboxExists = existsSync(sandboxModule);
const KEY = 'sandbox-growth';

describe.skipIf(!sandboxExists)('client against the sandbox', () => {
  let sandbox: SandboxHandle;

  beforeAll(async () => {
    // A computed specifier: tsc must not resolve a module that may not exist yet.
    const module = (await import(pathToFileURL(sandboxModule).href)) as { startSandbox: StartSandbox };
    sandbox = await module.startSandbox({ port: 0, companies: 20_000, seed: 42 });
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
