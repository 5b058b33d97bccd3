// The local part of a companies export, without the network: recorded pages (the bytes the
// service sent) through the code prospect runs on each page, from dist/ (so `npm run build` first):
// the same body reader and schema check as the API client (COMPANIES_BODY through checkJsonBody,
// src/api/http.ts) and the CSV writer with the companies columns, into a sink that only counts.
//
//   node bench/local-export.js DIR ROUNDS     (DIR holds page-*.json; prints one JSON line)
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMPANIES_BODY } from '../dist/api/client.js';
import { checkJsonBody } from '../dist/api/http.js';
import { COMPANY_COLUMNS } from '../dist/core/company-columns.js';
import { createRowWriter } from '../dist/io/writers.js';

const [dir, roundsText = '5'] = process.argv.slice(2);
const rounds = Math.max(1, Math.min(50, Number(roundsText)));
const pages = readdirSync(dir)
  .filter((name) => /^page-\d+\.json$/.test(name))
  .sort()
  .map((name) => readFileSync(join(dir, name)));
const bytes = pages.reduce((sum, page) => sum + page.length, 0);

let csvBytes = 0;
const sink = { write: async (text) => void (csvBytes += text.length) };
const writer = await createRowWriter('csv', sink, { columns: COMPANY_COLUMNS, toJson: (row) => row, escapeFormulas: true });

function checkPage(page) {
  const checked = checkJsonBody(COMPANIES_BODY, 200, {}, page);
  if (!checked.ok) throw new Error(`a recorded page failed its check: ${checked.problem}`);
  return checked.value.data;
}

async function fullRound() {
  let rows = 0;
  for (const page of pages) {
    const data = checkPage(page);
    await writer.writeRows(data);
    rows += data.length;
  }
  return rows;
}

function timed(work) {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  const result = work();
  return Promise.resolve(result).then((value) => {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const used = process.cpuUsage(cpu);
    return { value, ms, cpuMs: (used.user + used.system) / 1000 };
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];

await fullRound(); // warm-up: let the JIT settle
const full = [];
for (let round = 0; round < rounds; round++) full.push(await timed(fullRound));
const rows = full[0].value;

// Where the time goes, part by part: the same loop, each step timed on its own, page by page.
const parts = { read: [], check: [], csv: [], jsonParse: [] };
const now = () => Number(process.hrtime.bigint()) / 1e6;
for (let round = 0; round < rounds; round++) {
  const sums = { read: 0, check: 0, csv: 0, jsonParse: 0 };
  for (const page of pages) {
    const t0 = now();
    const json = COMPANIES_BODY.parseBytes(page) ?? JSON.parse(page.toString('utf8'));
    const t1 = now();
    const checked = COMPANIES_BODY.check(json);
    const t2 = now();
    await writer.writeRows(checked.value.data);
    const t3 = now();
    // For scale: JSON.parse of the whole page as one string, the usual way.
    JSON.parse(page.toString('utf8'));
    const t4 = now();
    sums.read += t1 - t0;
    sums.check += t2 - t1;
    sums.csv += t3 - t2;
    sums.jsonParse += t4 - t3;
  }
  for (const key of Object.keys(parts)) parts[key].push(sums[key]);
}

const perThousand = (ms) => (ms / rows) * 1000;
process.stdout.write(
  `${JSON.stringify({
    pages: pages.length,
    rows,
    bytes,
    rounds,
    rowsPerSecond: full.map((round) => (rows / round.ms) * 1000),
    cpuRowsPerSecond: full.map((round) => (rows / round.cpuMs) * 1000),
    msPer1000Rows: {
      readRows: perThousand(median(parts.read)),
      schemaCheck: perThousand(median(parts.check)),
      csv: perThousand(median(parts.csv)),
      jsonParseWholePage: perThousand(median(parts.jsonParse)),
    },
  })}\n`,
);
