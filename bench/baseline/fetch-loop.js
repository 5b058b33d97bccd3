#!/usr/bin/env node
// The least any export can do (issue 12's yardstick for prospect's wall time): fetch each companies
// page, read its body, take `next_cursor` and follow it until there is none; the rows are thrown
// away. Node's own fetch, one request at a time, no checks, no output.
//
//   BASE_URL=http://127.0.0.1:4010 API_KEY=sandbox-growth node bench/baseline/fetch-loop.js jQuery 1000
const [technology, limit = '1000'] = process.argv.slice(2);
const { BASE_URL, API_KEY } = process.env;
if (!technology || !BASE_URL || !API_KEY) {
  process.stderr.write('usage: BASE_URL=… API_KEY=… node bench/baseline/fetch-loop.js TECHNOLOGY [LIMIT]\n');
  process.exit(2);
}
let cursor = null;
let pages = 0;
do {
  const query = new URLSearchParams({ technology, limit, ...(cursor ? { cursor } : {}) });
  const response = await fetch(`${BASE_URL}/api/v1/companies?${query}`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  if (!response.ok) throw new Error(`status ${response.status}`);
  cursor = JSON.parse(await response.text()).next_cursor || null;
  pages++;
} while (cursor !== null && pages < 100_000);
process.stdout.write(`${pages}\n`);
