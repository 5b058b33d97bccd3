/**
 * In-process sandbox for tests: real HTTP on loopback, a free port, the default 50,000-company dataset
 * (built once per test file: the dataset is cached per process) and a fixed snapshot day so dates,
 * and therefore response bytes, do not change from one day to the next.
 */
import { request } from 'undici';
import { buildDataset, type Dataset } from '../../src/sandbox/dataset/dataset.js';
import { SANDBOX_KEYS, startSandbox, type SandboxOptions, type SandboxStats } from '../../src/sandbox/index.js';

export { SANDBOX_KEYS };
export type { SandboxStats };

export const TEST_SEED = 1;
export const TEST_AS_OF = '2025-06-30';
export const TEST_COMPANIES = 50_000;

export interface TestSandbox {
  url: string;
  close(): Promise<void>;
  /** Counters since start (the same numbers GET /_sandbox/stats answers). */
  stats(): SandboxStats;
}

export async function startTestSandbox(options: SandboxOptions = {}): Promise<TestSandbox> {
  const sandbox = await startSandbox({ host: '127.0.0.1', port: 0, seed: TEST_SEED, asOf: TEST_AS_OF, companies: TEST_COMPANIES, ...options });
  return { url: sandbox.url, close: () => sandbox.close(), stats: () => sandbox.stats() };
}

/** The dataset a test sandbox serves, for computing expected answers without HTTP. */
export function testDataset(options: { companies?: number; seed?: number } = {}): Dataset {
  return buildDataset({ companies: options.companies ?? TEST_COMPANIES, seed: options.seed ?? TEST_SEED });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Parsed JSON body (undefined when empty). */
  body: any;
}

/** GET (or another method) with an optional key, as plain as possible: undici.request and JSON.parse. */
export async function call(
  base: string,
  pathAndQuery: string,
  options: { key?: string; authorization?: string; method?: string } = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = {};
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  else if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  const response = await request(`${base}${pathAndQuery}`, { method: (options.method ?? 'GET') as 'GET', headers });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

/** A query string from pairs, encoded the way browsers and URLSearchParams do. */
export function qs(params: Record<string, string | number | undefined>): string {
  const defined = Object.entries(params).filter(([, v]) => v !== undefined) as Array<[string, string | number]>;
  return new URLSearchParams(defined.map(([k, v]): [string, string] => [k, String(v)])).toString();
}
