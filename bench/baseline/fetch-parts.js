#!/usr/bin/env node
// The least a split export can do (issue 17's ceiling for prospect's split walk): fetch the set's
// first page (the sample a split is chosen on), then walk every part at once, each following its
// `next_cursor` with Node's own fetch, one request at a time per part; bodies parsed for the cursor
// and thrown away. No checks, no merge, no output.
//
//   BASE_URL=… API_KEY=… node bench/baseline/fetch-parts.js \
//     'limit=1000&technology=jQuery' 'limit=1000&technology=jQuery&technology=MySQL' …
const [sample, ...parts] = process.argv.slice(2);
const { BASE_URL, API_KEY } = process.env;
if (!sample || parts.length === 0 || !BASE_URL || !API_KEY) {
  process.stderr.write('usage: BASE_URL=… API_KEY=… node bench/baseline/fetch-parts.js SAMPLE_QUERY PART_QUERY…\n');
  process.exit(2);
}

async function page(query, cursor) {
  const parameters = new URLSearchParams(query);
  if (cursor) parameters.set('cursor', cursor);
  const response = await fetch(`${BASE_URL}/api/v1/companies?${parameters}`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  if (!response.ok) throw new Error(`status ${response.status}`);
  return JSON.parse(await response.text()).next_cursor || null;
}

async function walk(query) {
  let cursor = null;
  let pages = 0;
  do {
    cursor = await page(query, cursor);
    pages++;
  } while (cursor !== null && pages < 100_000);
  return pages;
}

await page(sample, null);
const pages = await Promise.all(parts.map(walk));
// The pages of each part, after the sample's one.
process.stdout.write(`${JSON.stringify(pages)}\n`);
