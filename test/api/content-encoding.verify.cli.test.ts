/**
 * Issue 41: a server that closes the connection after a large gzip answer crashed prospect through
 * undici (exit 1), and on /verify the units charged were never recorded. Spawned: the promise is
 * about the process (its exit) and the ledger file it leaves.
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { scratchDir } from '../helpers/scratch.js';

const ADDRESSES = ['ana@acme.com', 'bob@acme.com', 'cy@acme.com', 'di@acme.com'];

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

it('verify against gzip answers of 400 KB with Connection: close: exit 0, every charged unit in the ledger', async () => {
  let charged = 0;
  const server = createServer((req, res) => {
    const email = new URL(req.url ?? '/', 'http://x').searchParams.get('email') ?? '';
    charged++;
    // Unknown fields, each within the bound on one, pad the answer past the 370 KB that crashed undici 7.
    const padding = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`padding${i}`, randomBytes(37_000).toString('base64')]),
    );
    const body = gzipSync(JSON.stringify({ data: { email, status: 'valid', ...padding }, meta: { units_used: 1 } }));
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      'content-length': body.length,
      connection: 'close',
    });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const cache = await scratchDir();
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const run = await runCli(['verify', '--yes', '--format', 'csv', ...ADDRESSES], {
      url,
      apiKey: 'test-key-undici-close',
      env: { PROSPECT_CACHE_DIR: cache },
      timeoutMs: 60_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(charged).toBe(ADDRESSES.length);
    for (const address of ADDRESSES) expect(run.stdout).toContain(address);
    const ledger = (await Promise.all((await filesUnder(cache)).map((file) => readFile(file)))).map(String).join('\n');
    for (const address of ADDRESSES) expect(ledger).toContain(address);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}, 60_000);
