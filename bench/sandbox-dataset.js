/**
 * Measures how long a sandbox takes to build its dataset and answer, and how much memory it holds.
 * Not part of the test suite (a million companies take a while); run after `npm run build`:
 *
 *   node --expose-gc bench/sandbox-dataset.js 1000000
 */
import { request } from 'undici';
import { SANDBOX_KEYS, startSandbox } from '../dist/sandbox/index.js';

const companies = Number(process.argv[2] ?? 1_000_000);
const mb = (bytes) => `${Math.round(bytes / 1024 / 1024)} MiB`;

async function timed(url, path) {
  const started = performance.now();
  const res = await request(`${url}${path}`, { headers: { authorization: `Bearer ${SANDBOX_KEYS.scale}` } });
  const text = await res.body.text();
  return `${res.statusCode} in ${Math.round(performance.now() - started)} ms (${text.length} bytes)`;
}

const started = performance.now();
const sandbox = await startSandbox({ port: 0, companies, seed: 1 });
const listening = ((performance.now() - started) / 1000).toFixed(1);
console.log(`${companies.toLocaleString('en-US')} companies: listening after ${listening} s`);
const jquery = '/api/v1/companies?technology=jQuery&limit=1000';
const shopify = '/api/v1/companies?technology=Shopify&country=united%20states&employee_range=11-500&limit=1000';
console.log(`first page, jQuery (total over the whole set): ${await timed(sandbox.url, jquery)}`);
console.log(`same query, next call (cached totals):         ${await timed(sandbox.url, jquery)}`);
console.log(`Shopify in the US, 11-500:                      ${await timed(sandbox.url, shopify)}`);
globalThis.gc?.();
const memory = process.memoryUsage();
console.log(
  `memory: rss ${mb(memory.rss)}, heap used ${mb(memory.heapUsed)}, array buffers ${mb(memory.arrayBuffers)}`,
);
await sandbox.close();
