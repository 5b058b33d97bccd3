#!/usr/bin/env node
// Issue 17, point 2: a companies export split into parts walked at once (src/core/company-partition.ts)
// against the single cursor, on a sandbox with latency. Runs interleaved (one run of each
// --concurrency in turn, `runs` times), whole processes as users run them, medians with their
// spread; every export's bytes are checked against the --concurrency 1 export.
//
//   node bench/partition.js                                   # 50,000 companies, --latency 200, 3 runs
//   node bench/partition.js --companies 1000000 --runs 2      # the large set: wall time and peak RSS
//
// benchPartition() is exported for bench/run.js (a section of its own); needs `npm run build` first.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BIN, measure, prospectEnv, startSandbox, summarize } from './lib.js';

/**
 * `companies -t <technology> --concurrency N > out.csv` for each N of `levels`, interleaved, `runs`
 * times, against one sandbox of `companies` companies at `latencyMs`. Per level: wall time, peak
 * RSS, the sandbox's companies calls per run, and the speedup over the first level (per round of
 * runs, then the median). The load average before and after says how busy the machine was.
 */
export async function benchPartition({ companies = 50_000, latencyMs = 200, runs = 3, technology = 'jQuery', levels = [1, 8], log = () => {} } = {}) {
  const scratch = mkdtempSync(join(tmpdir(), 'prospect-bench-partition-'));
  log(`partition: sandbox of ${companies.toLocaleString('en-US')} companies, --latency ${latencyMs}`);
  const sandbox = await startSandbox({ companies, latencyMs });
  const loadBefore = loadavg().map((n) => n.toFixed(2));
  try {
    const env = prospectEnv(sandbox.url);
    const measured = Object.fromEntries(levels.map((level) => [level, []]));
    const calls = Object.fromEntries(levels.map((level) => [level, []]));
    let reference;
    for (let run = 0; run < runs; run++) {
      for (const level of levels) {
        log(`partition: run ${run + 1}/${runs}, --concurrency ${level}`);
        const out = join(scratch, `c${level}.csv`);
        const before = await sandbox.stats();
        measured[level].push(await measure(process.execPath, [BIN, 'companies', '--technology', technology, '--concurrency', String(level)], { env, stdout: out, timeoutMs: 3_600_000 }));
        calls[level].push((await sandbox.stats()).companies - before.companies);
        const bytes = readFileSync(out);
        reference ??= bytes;
        if (!bytes.equals(reference)) throw new Error(`--concurrency ${level} wrote other bytes than --concurrency ${levels[0]}`);
      }
    }
    const base = measured[levels[0]];
    return {
      companies,
      latencyMs,
      technology,
      rows: reference.toString('utf8').split('\n').length - 2,
      loadBefore,
      loadAfter: loadavg().map((n) => n.toFixed(2)),
      levels: Object.fromEntries(
        levels.map((level) => [
          level,
          {
            wall: summarize(measured[level].map((run) => run.wallMs)),
            rssMb: summarize(measured[level].map((run) => run.rssMb)),
            calls: summarize(calls[level]),
            speedup: summarize(measured[level].map((run, index) => base[index].wallMs / run.wallMs)),
          },
        ]),
      ),
    };
  } finally {
    await sandbox.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (!existsSync(BIN)) throw new Error('run `npm run build` first');
  const option = (name, fallback) => {
    const given = process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ?? process.argv[process.argv.indexOf(`--${name}`) + 1];
    return process.argv.includes(`--${name}`) || process.argv.some((arg) => arg.startsWith(`--${name}=`)) ? given : fallback;
  };
  const result = await benchPartition({
    companies: Number(option('companies', 50_000)),
    latencyMs: Number(option('latency', 200)),
    runs: Number(option('runs', 3)),
    technology: option('technology', 'jQuery'),
    levels: option('levels', '1,8').split(',').map(Number),
    log: (text) => process.stderr.write(`bench: ${text}\n`),
  });
  process.stdout.write(`${JSON.stringify(result, (key, value) => (key === 'values' ? undefined : value), 2)}\n`);
  for (const [level, data] of Object.entries(result.levels)) {
    process.stderr.write(
      `--concurrency ${level}: ${(data.wall.median / 1000).toFixed(2)} s (${(data.wall.min / 1000).toFixed(2)}–${(data.wall.max / 1000).toFixed(2)}), ` +
        `${data.speedup.median.toFixed(2)}× (${data.speedup.min.toFixed(2)}–${data.speedup.max.toFixed(2)}), peak RSS ${data.rssMb.median.toFixed(0)} MB, ${data.calls.median} calls\n`,
    );
  }
  process.stderr.write(`load average before ${result.loadBefore.join(' ')}, after ${result.loadAfter.join(' ')}\n`);
}
