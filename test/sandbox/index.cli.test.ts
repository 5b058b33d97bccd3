/**
 * A cold `prospect sandbox` with the default dataset (50,000 companies) starts and answers: the URL
 * on stdout's first line, then a real answer. How fast is measured by `node bench/sandbox-startup.js`
 * (a bench, not a test: a neighbour's load must not fail the suite).
 */
import { describe, expect, it } from 'vitest';
import { call, SANDBOX_KEYS, spawnSandbox } from '../helpers/sandbox.js';

describe('startup', () => {
  it('a cold `prospect sandbox` builds the default 50,000 companies and answers its first request', async () => {
    const sandbox = spawnSandbox(['--port', '0']);
    try {
      const url = await sandbox.url;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const first = await call(url, '/api/v1/companies?technology=Shopify&limit=100', { key: SANDBOX_KEYS.growth });
      expect(first.status).toBe(200);
      expect(first.body.data).toHaveLength(100);
      // The whole default dataset, not a small one: the listing's total counts Shopify sites among 50,000 companies.
      expect(first.body.meta.total).toBeGreaterThan(1000);
    } finally {
      expect((await sandbox.stop('SIGTERM')).code).toBe(0);
    }
  });
});
