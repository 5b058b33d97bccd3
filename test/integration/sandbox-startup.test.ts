/**
 * The default dataset must build and the server answer its first request in under 2 s on these
 * 2-core machines. Measured as a user meets it: a cold `prospect sandbox` process, from spawn to the
 * first answered request. The test suite runs other files beside this one, so the figure is the
 * best of three cold starts: a neighbour's load can only make a start slower, never faster.
 */
import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { finishCli, startCli } from '../helpers/cli.js';
import { SANDBOX_KEYS } from '../helpers/sandbox.js';

async function coldStartMs(): Promise<number> {
  const started = performance.now();
  const child = startCli(['sandbox', '--port', '0']);
  const finished = finishCli(child);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let buffered = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        if (buffered.includes('\n')) resolve(buffered.split('\n')[0]!);
      });
      child.once('exit', () => reject(new Error('the sandbox exited before printing its URL')));
    });
    const response = await request(`${url}/api/v1/companies?technology=Shopify&limit=100`, { headers: { authorization: `Bearer ${SANDBOX_KEYS.growth}` } });
    await response.body.text();
    expect(response.statusCode).toBe(200);
    return performance.now() - started;
  } finally {
    child.kill('SIGTERM');
    await finished;
  }
}

describe('startup', () => {
  it('a cold `prospect sandbox` builds 50,000 companies and answers its first request in under 2 s', async () => {
    const timings: number[] = [];
    for (let attempt = 0; attempt < 3; attempt += 1) {
      timings.push(await coldStartMs());
      if (timings[timings.length - 1]! < 2000) break;
    }
    console.log(`sandbox cold start to first answer: ${timings.map((ms) => `${Math.round(ms)} ms`).join(', ')}`);
    expect(Math.min(...timings)).toBeLessThan(2000);
  }, 30_000);
});
