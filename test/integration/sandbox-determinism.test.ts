/** The same seed gives the same bytes; another seed gives other data. */
import { describe, expect, it } from 'vitest';
import { call, SANDBOX_KEYS, startTestSandbox } from '../helpers/sandbox.js';

const paths = [
  '/api/v1/companies?technology=Shopify&limit=200',
  '/api/v1/companies?technology=WordPress&country=germany&employee_range=11-500&limit=50',
  '/api/v1/verify?email=jane.doe%40example.com',
];

async function bodies(options: { seed: number; companies: number }, contactDomains: (url: string) => Promise<string>): Promise<string[]> {
  const sandbox = await startTestSandbox(options);
  try {
    const out: string[] = [];
    for (const path of paths) out.push((await call(sandbox.url, path, { key: SANDBOX_KEYS.scale })).text);
    const domains = await contactDomains(sandbox.url);
    out.push((await call(sandbox.url, `/api/v1/contacts?domain=${domains}&limit=1000`, { key: SANDBOX_KEYS.scale })).text);
    return out;
  } finally {
    await sandbox.close();
  }
}

/** The first 20 domains of a listing, so both runs ask for contacts of the same companies. */
const firstDomains = async (url: string) =>
  ((await call(url, '/api/v1/companies?technology=jQuery&limit=20', { key: SANDBOX_KEYS.scale })).body.data as Array<{ domain: string }>).map((r) => r.domain).join(',');

describe('determinism', () => {
  it('gives identical response bodies for two sandboxes with the same seed', async () => {
    const a = await bodies({ seed: 11, companies: 20_000 }, firstDomains);
    const b = await bodies({ seed: 11, companies: 20_000 }, firstDomains);
    expect(b).toEqual(a);
    expect(JSON.parse(a[3] as string).data.length).toBeGreaterThan(0);
  });

  it('gives different data for a different seed', async () => {
    const a = await bodies({ seed: 11, companies: 20_000 }, firstDomains);
    const c = await bodies({ seed: 12, companies: 20_000 }, firstDomains);
    expect(c[0]).not.toEqual(a[0]);
    expect(c[1]).not.toEqual(a[1]);
  });
});
