#!/usr/bin/env node
// The floor's time (issue 28): CALLS contacts calls of 100 domains at limit=1000, CONCURRENCY at a
// time, the bodies read and thrown away; a 429 is waited out for its Retry-After (1 s without one)
// and asked again. The least time any client needs for a job whose fewest calls is CALLS.
//
//   BASE_URL=http://127.0.0.1:4010 API_KEY=sandbox-growth DOMAINS=a.com,b.com node bench/baseline/floor-calls.js 21 4
const [calls, concurrency = '4'] = process.argv.slice(2).map(Number);
const { BASE_URL, API_KEY, DOMAINS } = process.env;
if (!calls || !BASE_URL || !API_KEY || !DOMAINS) {
  process.stderr.write(
    'usage: BASE_URL=… API_KEY=… DOMAINS=a.com,b.com node bench/baseline/floor-calls.js CALLS [CONCURRENCY]\n',
  );
  process.exit(2);
}
const domains = DOMAINS.split(',');
let next = 0;
let waits = 0;

async function worker() {
  while (next < calls) {
    const index = next++;
    const batch = Array.from(
      { length: Math.min(100, domains.length) },
      (_, offset) => domains[(index * 100 + offset) % domains.length],
    );
    const query = new URLSearchParams({ domain: [...new Set(batch)].join(','), limit: '1000' });
    for (let attempt = 0; attempt < 100; attempt++) {
      const response = await fetch(`${BASE_URL}/api/v1/contacts?${query}`, {
        headers: { authorization: `Bearer ${API_KEY}` },
      });
      await response.arrayBuffer();
      if (response.status === 200) break;
      if (response.status !== 429) throw new Error(`status ${response.status}`);
      waits++;
      await new Promise((resolve) => setTimeout(resolve, 1000 * Number(response.headers.get('retry-after') ?? 1)));
    }
  }
}

await Promise.all(Array.from({ length: concurrency }, worker));
process.stdout.write(`${waits}\n`);
