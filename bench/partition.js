#!/usr/bin/env node
// Issue 17, point 2: a companies export split into parts walked at once (src/core/companies/split.ts)
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
import { BIN, measure, prospectEnv, ROOT, startSandbox, summarize } from './lib.js';
import { firstPageQueries, startRecorder, startReplay } from './replay.js';

/**
 * `companies -t <technology> --concurrency N > out.csv` for each N of `levels`, interleaved, `runs`
 * times, against one sandbox of `companies` companies at `latencyMs`. Per level: wall time, peak
 * RSS, the sandbox's companies calls per run, and the speedup over the first level (per round of
 * runs, then the median). The load average before and after says how busy the machine was.
 *
 * Two baselines in the same rounds tell where the time goes:
 * - `ceiling`: bench/baseline/fetch-parts.js, the least a split walk can do against this sandbox
 *   (the sample page, then the same parts as the last level's, bodies parsed for the cursor only),
 *   against the first level's prospect run: no client beats that ratio on this machine.
 * - `replay`: prospect again at each level, against the sandbox's recorded answers served after
 *   the same latency by a server that does nothing else (bench/replay.js): the sandbox's CPU, which
 *   shares this machine's cores with the client, taken out.
 */
export async function benchPartition({
  companies = 50_000,
  latencyMs = 200,
  runs = 3,
  technology = 'jQuery',
  levels = [1, 8],
  log = () => {},
} = {}) {
  const scratch = mkdtempSync(join(tmpdir(), 'prospect-bench-partition-'));
  log(`partition: sandbox of ${companies.toLocaleString('en-US')} companies, --latency ${latencyMs}`);
  const sandbox = await startSandbox({ companies, latencyMs });
  const loadBefore = loadavg().map((n) => n.toFixed(2));
  const exportArgs = (level) => [BIN, 'companies', '--technology', technology, '--concurrency', String(level)];
  let replay;
  try {
    const env = prospectEnv(sandbox.url);
    log("partition: recording the first and the last level's answers");
    const recorder = await startRecorder(sandbox.url);
    const [single, split] = [levels[0], levels.at(-1)];
    await measure(process.execPath, exportArgs(single), { env: prospectEnv(recorder.url), timeoutMs: 3_600_000 });
    const [sample] = firstPageQueries(recorder.answers);
    await measure(process.execPath, exportArgs(split), { env: prospectEnv(recorder.url), timeoutMs: 3_600_000 });
    const parts = firstPageQueries(recorder.answers).filter((query) => query !== sample);
    await recorder.stop();
    replay = await startReplay(recorder.answers, latencyMs);
    const replayLevels = [...new Set([single, split])];

    const measured = Object.fromEntries(levels.map((level) => [level, []]));
    const calls = Object.fromEntries(levels.map((level) => [level, []]));
    const replayed = Object.fromEntries(replayLevels.map((level) => [level, []]));
    const ceiling = [];
    let partPages = [];
    let reference;
    const check = (out, what) => {
      const bytes = readFileSync(out);
      reference ??= bytes;
      if (!bytes.equals(reference)) throw new Error(`${what} wrote other bytes than --concurrency ${levels[0]}`);
    };
    for (let run = 0; run < runs; run++) {
      for (const level of levels) {
        log(`partition: run ${run + 1}/${runs}, --concurrency ${level}`);
        const out = join(scratch, `c${level}.csv`);
        const before = await sandbox.stats();
        measured[level].push(
          await measure(process.execPath, exportArgs(level), { env, stdout: out, timeoutMs: 3_600_000 }),
        );
        calls[level].push((await sandbox.stats()).companies - before.companies);
        check(out, `--concurrency ${level}`);
      }
      if (parts.length > 0) {
        log(`partition: run ${run + 1}/${runs}, the bare fetch of the ${parts.length} parts`);
        const bare = await measure(
          process.execPath,
          [join(ROOT, 'bench', 'baseline', 'fetch-parts.js'), sample, ...parts],
          { env, stdout: 'capture' },
        );
        ceiling.push(bare);
        partPages = JSON.parse(bare.stdout);
      }
      for (const level of replayLevels) {
        log(`partition: run ${run + 1}/${runs}, --concurrency ${level} against the replayed answers`);
        const out = join(scratch, `r${level}.csv`);
        replayed[level].push(
          await measure(process.execPath, exportArgs(level), {
            env: prospectEnv(replay.url),
            stdout: out,
            timeoutMs: 3_600_000,
          }),
        );
        check(out, `--concurrency ${level} against the replayed answers`);
      }
    }
    if (replay.unrecorded() > 0)
      throw new Error(`the replayed runs asked ${replay.unrecorded()} requests that were not recorded`);
    const base = measured[levels[0]];
    const speedups = (runsOf, baseRuns) => summarize(runsOf.map((run, index) => baseRuns[index].wallMs / run.wallMs));
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
            speedup: speedups(measured[level], base),
          },
        ]),
      ),
      ceiling:
        ceiling.length === 0
          ? undefined
          : {
              parts: parts.length,
              pages: 1 + partPages.reduce((total, count) => total + count, 0),
              largestPart: Math.max(...partPages),
              wall: summarize(ceiling.map((run) => run.wallMs)),
              speedup: speedups(ceiling, base),
            },
      replay: Object.fromEntries(
        replayLevels.map((level) => [
          level,
          {
            wall: summarize(replayed[level].map((run) => run.wallMs)),
            cpuMs: summarize(replayed[level].map((run) => run.cpuMs ?? NaN)),
            speedup: speedups(replayed[level], replayed[single]),
          },
        ]),
      ),
    };
  } finally {
    await replay?.stop();
    await sandbox.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (!existsSync(BIN)) throw new Error('run `npm run build` first');
  const option = (name, fallback) => {
    const given =
      process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ??
      process.argv[process.argv.indexOf(`--${name}`) + 1];
    return process.argv.includes(`--${name}`) || process.argv.some((arg) => arg.startsWith(`--${name}=`))
      ? given
      : fallback;
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
  const seconds = (valueMs) => (valueMs / 1000).toFixed(2);
  const times = (s) => `${s.median.toFixed(2)}× (${s.min.toFixed(2)}–${s.max.toFixed(2)})`;
  for (const [level, data] of Object.entries(result.levels)) {
    process.stderr.write(
      `--concurrency ${level}: ${seconds(data.wall.median)} s (${seconds(data.wall.min)}–${seconds(data.wall.max)}), ` +
        `${times(data.speedup)}, peak RSS ${data.rssMb.median.toFixed(0)} MB, ${data.calls.median} calls\n`,
    );
  }
  if (result.ceiling) {
    const { ceiling } = result;
    process.stderr.write(
      `bare fetch of the ${ceiling.parts} parts (${ceiling.pages} pages): ${seconds(ceiling.wall.median)} s, ` +
        `${times(ceiling.speedup)} the first level\n`,
    );
  }
  for (const [level, data] of Object.entries(result.replay)) {
    process.stderr.write(
      `replayed, --concurrency ${level}: ${seconds(data.wall.median)} s, ${times(data.speedup)}, ` +
        `CPU ${seconds(data.cpuMs.median)} s\n`,
    );
  }
  process.stderr.write(`load average before ${result.loadBefore.join(' ')}, after ${result.loadAfter.join(' ')}\n`);
}
