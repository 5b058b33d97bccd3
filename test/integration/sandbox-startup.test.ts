/**
 * The default dataset must build and the server answer its first request in under 2 s (the target on a
 * 2-core machine). This file builds nothing else, so the dataset and the fixture files are cold.
 */
import { describe, expect, it } from 'vitest';
import { call, SANDBOX_KEYS, startTestSandbox } from '../helpers/sandbox.js';

describe('startup', () => {
  it('builds 50,000 companies and answers the first request in under 2 s', async () => {
    const started = performance.now();
    // A seed no other test uses: nothing is cached in this process.
    const sandbox = await startTestSandbox({ seed: 20240601 });
    const listening = performance.now();
    try {
      const res = await call(sandbox.url, '/api/v1/companies?technology=Shopify&limit=100', { key: SANDBOX_KEYS.growth });
      const answered = performance.now();
      expect(res.status).toBe(200);
      console.log(`sandbox startup: listening after ${Math.round(listening - started)} ms, first answer after ${Math.round(answered - started)} ms`);
      // 2 s is the target; 0.5 s of slack absorbs a noisy CI neighbour.
      expect(answered - started).toBeLessThan(2500);
    } finally {
      await sandbox.close();
    }
  });
});
