#!/usr/bin/env node
// `npm run bench` (issues 8 and 12): prospect measured against its baselines, on this machine, in one run.
// Prints the figures and writes BENCHMARKS.md through bench/report.js (with --quick: a reduced run, written to
// bench/out/BENCHMARKS.quick.md unless --write is given). Needs `npm run build` first (the bench
// times bin/prospect.js as users run it); the shell baselines need curl and jq.
//
//   npm run bench                 # about 8 minutes on an idle 2-core machine
//   npm run bench -- --quick      # about 2 minutes
//   npm run bench -- --only=startup,export,latency,contacts,memory,pipeline,xlsx,stream-input,partition,ledger
//   npm run bench -- --only=state-store   # issue 35, PostgreSQL (also: node bench/state-store.js)
//   npm run bench -- --only=changes       # issue 45, companies --changes (also: node bench/changes.js)
//   npm run bench -- --report-only  # rewrite BENCHMARKS.md from bench/out/results.json
//
// Every sandbox is a `prospect sandbox` child process on loopback, so the service's CPU is not the
// measured process's; the figures are medians of several runs with their min–max spread.
import { availableParallelism, cpus, loadavg, totalmem, tmpdir } from 'node:os';
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  createReadStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { BIN, ROOT, hasCommand, measure, measurePipe, prospectEnv, startSandbox, summarize, timeSync } from './lib.js';
import { benchLedger } from './ledger.js';
import { benchPartition } from './partition.js';
import { benchCalls } from './calls.js';
import { benchStateStore } from './state-store.js';
import { benchChanges } from './changes.js';
import { TECHNOLOGY, report } from './report.js';

const args = process.argv.slice(2);
const QUICK = args.includes('--quick');
const WRITE = !QUICK || args.includes('--write');
const ONLY = args
  .find((arg) => arg.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',') ?? [
  'startup',
  'export',
  'latency',
  'contacts',
  'memory',
  'pipeline',
  'xlsx',
  'stream-input',
  'partition',
  'ledger',
  'state-store',
  'changes',
];

const CONFIG = QUICK
  ? {
      startupRuns: 10,
      export: { companies: 100_000, prospectRuns: 2, shellRuns: 1 },
      latency: { companies: 20_000, latencyMs: 100, runs: 2 },
      contacts: { runs: 1, pipelineCompanies: 20_000, rateLimit: 5, latencyMs: 200, timedRuns: 1 },
      memory: { companies: 100_000, bigRuns: 1, smallRuns: 2, smallMax: 10_000 },
      pipeline: {
        sizes: [
          { companies: 5_000, runs: 1 },
          { companies: 100_000, runs: 1 },
        ],
        concurrency: 4,
      },
      xlsx: { companies: 200_000, rows: 100_000, runs: 1 },
      streamInput: { companies: 1_000_000, seniority: 'cxo', runs: 1, slowRuns: 3, pauseMs: 3000 },
      partition: { companies: 50_000, latencyMs: 200, runs: 2 },
      ledger: { companies: 5_000, keys: 1_000_000, runs: 1 },
      stateStore: { companies: 5_000, runs: 1, addresses: 400 },
      changes: { companies: 100_000, runs: 1 },
    }
  : {
      startupRuns: 30,
      export: { companies: 200_000, prospectRuns: 3, shellRuns: 3 },
      latency: { companies: 100_000, latencyMs: 100, runs: 3 },
      contacts: { runs: 3, pipelineCompanies: 20_000, rateLimit: 5, latencyMs: 200, timedRuns: 3 },
      memory: { companies: 1_000_000, bigRuns: 2, smallRuns: 3, smallMax: 10_000 },
      pipeline: {
        sizes: [
          { companies: 20_000, runs: 3 },
          { companies: 1_000_000, runs: 1 },
        ],
        concurrency: 4,
      },
      xlsx: { companies: 200_000, rows: 100_000, runs: 2 },
      streamInput: { companies: 1_000_000, seniority: 'cxo', runs: 2, slowRuns: 5, pauseMs: 3000 },
      partition: { companies: 50_000, latencyMs: 200, runs: 3 },
      ledger: { companies: 20_000, keys: 10_000_000, runs: 3 },
      stateStore: { companies: 20_000, runs: 3, addresses: 1_600 },
      // jQuery on 1,000,000 companies: the listing of about 700,000 the target names.
      changes: { companies: 1_000_000, runs: 3 },
    };

const REPORT_ONLY = args.includes('--report-only');
if (!REPORT_ONLY && !existsSync(join(ROOT, 'dist', 'cli', 'cli.js'))) {
  process.stderr.write('bench: dist/ is missing; run `npm run build` first.\n');
  process.exit(2);
}
const SHELL_OK = hasCommand('curl') && hasCommand('jq') && hasCommand('bash');
const scratch = mkdtempSync(join(tmpdir(), 'prospect-bench-run-'));
const log = (text) => process.stderr.write(`bench: ${text}\n`);
const node = process.execPath;
const results = REPORT_ONLY
  ? JSON.parse(readFileSync(join(ROOT, 'bench', 'out', QUICK ? 'results.quick.json' : 'results.json'), 'utf8'))
  : {
      quick: QUICK,
      machine: machine(),
      startedAt: new Date().toISOString(),
      loadBefore: loadavg().map((n) => n.toFixed(2)),
    };
const benchStarted = Date.now();

try {
  if (!REPORT_ONLY) {
    if (ONLY.includes('startup')) results.startup = benchStartup();
    if (ONLY.includes('export')) results.export = await benchExport();
    if (ONLY.includes('latency')) results.latency = await benchLatencyExport();
    if (ONLY.includes('contacts')) results.calls = await benchCalls({ scratch, log, config: CONFIG.contacts });
    if (ONLY.includes('memory')) results.memory = await benchMemory();
    if (ONLY.includes('pipeline')) results.pipeline = await benchPipeline();
    if (ONLY.includes('xlsx')) results.xlsx = await benchXlsx();
    if (ONLY.includes('stream-input')) results.streamInput = await benchStreamInput();
    if (ONLY.includes('partition'))
      results.partition = await benchPartition({ ...CONFIG.partition, levels: [1, 8], log });
    if (ONLY.includes('ledger')) results.ledger = await benchLedger({ scratch, log, config: CONFIG.ledger });
    // Issue 35: needs PostgreSQL's programs and root (the cluster runs as the `postgres` user).
    if (ONLY.includes('state-store') && (hasCommand('initdb') || existsSync('/usr/lib/postgresql')))
      results.stateStore = await benchStateStore({ scratch, log, config: CONFIG.stateStore });
    else if (ONLY.includes('state-store')) log('state store: skipped, PostgreSQL is not installed');
    if (ONLY.includes('changes')) results.changes = await benchChanges({ scratch, log, config: CONFIG.changes });
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
if (!REPORT_ONLY) {
  results.loadAfter = loadavg().map((n) => n.toFixed(2));
  results.benchSeconds = Math.round((Date.now() - benchStarted) / 1000);
}

// The hand-measured sections (and any this run leaves out) come from the BENCHMARKS.md in the tree.
const current = join(ROOT, 'BENCHMARKS.md');
const markdown = report(results, existsSync(current) ? readFileSync(current, 'utf8') : '');
process.stdout.write(`${markdown}\n`);
const outDir = join(ROOT, 'bench', 'out');
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, QUICK ? 'results.quick.json' : 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
const target = WRITE ? join(ROOT, 'BENCHMARKS.md') : join(outDir, 'BENCHMARKS.quick.md');
writeFileSync(target, `${markdown}\n`);
log(`wrote ${target.slice(ROOT.length + 1)} (${results.benchSeconds} s)`);

// ---------------------------------------------------------------------------------------------
// 1. Start-up

function benchStartup() {
  log(`start-up: ${CONFIG.startupRuns} runs of each, interleaved`);
  const commands = { bare: ['-e', '0'], version: [BIN, '--version'], help: [BIN, 'companies', '--help'] };
  const times = { bare: [], version: [], help: [] };
  for (const argv of Object.values(commands)) timeSync(node, argv); // warm the file cache
  for (let run = 0; run < CONFIG.startupRuns; run++) {
    for (const [name, argv] of Object.entries(commands)) times[name].push(timeSync(node, argv));
  }
  const bare = summarize(times.bare);
  const version = summarize(times.version);
  const help = summarize(times.help);
  return { bare, version, help, versionRatio: version.median / bare.median, helpRatio: help.median / bare.median };
}

// ---------------------------------------------------------------------------------------------
// 2. Cursor export throughput

async function benchExport() {
  const config = CONFIG.export;
  log(`export: sandbox of ${config.companies.toLocaleString('en-US')} companies`);
  const sandbox = await startSandbox({ companies: config.companies });
  try {
    const env = prospectEnv(sandbox.url);
    const prospectOut = join(scratch, 'prospect.csv');
    const prospect = [];
    for (let run = 0; run < config.prospectRuns; run++) {
      log(`export: prospect run ${run + 1}/${config.prospectRuns}`);
      prospect.push(await measure(node, [BIN, 'companies', '--technology', TECHNOLOGY], { env, stdout: prospectOut }));
    }
    const prospectDomains = firstColumn(readFileSync(prospectOut, 'utf8'));
    const rows = prospectDomains.length;

    let shell;
    if (SHELL_OK) {
      const shellOut = join(scratch, 'shell.csv');
      const runs = [];
      for (let run = 0; run < config.shellRuns; run++) {
        log(`export: shell baseline (curl + jq) run ${run + 1}/${config.shellRuns}`);
        runs.push(
          await measure('bash', [join(ROOT, 'bench', 'baseline', 'export.sh'), TECHNOLOGY, '1000'], {
            env,
            stdout: shellOut,
          }),
        );
      }
      const shellDomains = firstColumn(readFileSync(shellOut, 'utf8'));
      const same =
        shellDomains.length === rows && shellDomains.every((domain, index) => domain === prospectDomains[index]);
      shell = {
        wall: summarize(runs.map((run) => run.wallMs)),
        rowsPerSecond: summarize(runs.map((run) => (rows / run.wallMs) * 1000)),
        sameDomainsSameOrder: same,
        shellRows: shellDomains.length,
      };
    }

    const wall = summarize(prospect.map((run) => run.wallMs));
    const rowsPerSecond = summarize(prospect.map((run) => (rows / run.wallMs) * 1000));
    return {
      companies: config.companies,
      rows,
      pageSize: 1000,
      prospect: { wall, rowsPerSecond, rssMb: summarize(prospect.map((run) => run.rssMb)) },
      shell,
      speedup: shell ? rowsPerSecond.median / shell.rowsPerSecond.median : undefined,
    };
  } finally {
    await sandbox.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// 2b. Export against a service with latency, next to a bare fetch loop

/**
 * What a user waits for: the export against a service that takes `latencyMs` to answer each page,
 * against bench/baseline/fetch-loop.js (Node's fetch following next_cursor, bodies thrown away) on
 * the same sandbox, runs interleaved. Both are whole processes, start-up included.
 */
async function benchLatencyExport() {
  const config = CONFIG.latency;
  log(`latency: sandbox of ${config.companies.toLocaleString('en-US')} companies, --latency ${config.latencyMs}`);
  const sandbox = await startSandbox({ companies: config.companies, latencyMs: config.latencyMs });
  try {
    const env = prospectEnv(sandbox.url);
    const out = join(scratch, 'latency.csv');
    const prospect = [];
    const bare = [];
    let pages;
    for (let run = 0; run < config.runs; run++) {
      log(`latency: run ${run + 1}/${config.runs}, prospect then the bare fetch loop`);
      const before = await sandbox.stats();
      prospect.push(await measure(node, [BIN, 'companies', '--technology', TECHNOLOGY], { env, stdout: out }));
      pages = (await sandbox.stats()).companies - before.companies;
      const loop = await measure(node, [join(ROOT, 'bench', 'baseline', 'fetch-loop.js'), TECHNOLOGY, '1000'], {
        env,
        stdout: 'capture',
      });
      if (Number(loop.stdout.trim()) !== pages)
        throw new Error(`the bare loop fetched ${loop.stdout.trim()} pages, prospect ${pages}`);
      bare.push(loop);
    }
    const ratios = prospect.map((run, index) => run.wallMs / bare[index].wallMs);
    return {
      companies: config.companies,
      latencyMs: config.latencyMs,
      rows: countLines(out) - 1,
      pages,
      prospect: {
        wall: summarize(prospect.map((run) => run.wallMs)),
        rssMb: summarize(prospect.map((run) => run.rssMb)),
      },
      bare: { wall: summarize(bare.map((run) => run.wallMs)) },
      ratio: summarize(ratios),
    };
  } finally {
    await sandbox.stop();
  }
}

/** The first field of every record after the header (quoted fields, "" escapes and newlines in quotes handled). */
function firstColumn(text) {
  const values = [];
  let index = 0;
  let header = true;
  const length = text.length;
  while (index < length) {
    let value = '';
    if (text[index] === '"') {
      index++;
      for (;;) {
        const quote = text.indexOf('"', index);
        if (quote === -1) throw new Error('unterminated quoted field');
        value += text.slice(index, quote);
        if (text[quote + 1] === '"') {
          value += '"';
          index = quote + 2;
        } else {
          index = quote + 1;
          break;
        }
      }
    } else {
      let end = index;
      while (end < length && text[end] !== ',' && text[end] !== '\n') end++;
      value = text.slice(index, end);
      index = end;
    }
    // Skip the rest of the record: to the first newline outside quotes.
    let quoted = false;
    while (index < length) {
      const char = text[index++];
      if (char === '"') quoted = !quoted;
      else if (char === '\n' && !quoted) break;
    }
    if (!header) values.push(value);
    header = false;
  }
  return values;
}

// ---------------------------------------------------------------------------------------------
// 3. Contacts calls against the fewest the service allows: bench/calls.js

/** Newlines in a file, read 1 MiB at a time: a pipeline over the 1,000,000-company sandbox writes 4 GB. */
function countLines(path) {
  const fd = openSync(path, 'r');
  const buffer = Buffer.alloc(1 << 20);
  let lines = 0;
  try {
    for (let read; (read = readSync(fd, buffer, 0, buffer.length, null)) > 0;) {
      for (let index = buffer.indexOf(10); index !== -1 && index < read; index = buffer.indexOf(10, index + 1)) lines++;
    }
  } finally {
    closeSync(fd);
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// 4. Memory

async function benchMemory() {
  const config = CONFIG.memory;
  log(`memory: sandbox of ${config.companies.toLocaleString('en-US')} companies`);
  const sandbox = await startSandbox({ companies: config.companies });
  try {
    const env = prospectEnv(sandbox.url);
    const out = join(scratch, 'memory.csv');
    const big = [];
    for (let run = 0; run < config.bigRuns; run++) {
      log(`memory: whole export, run ${run + 1}/${config.bigRuns}`);
      big.push(await measure(node, [BIN, 'companies', '--technology', TECHNOLOGY], { env, stdout: out }));
    }
    const bigRows = countLines(out) - 1;
    const small = [];
    for (let run = 0; run < config.smallRuns; run++) {
      log(`memory: --max ${config.smallMax}, run ${run + 1}/${config.smallRuns}`);
      small.push(
        await measure(node, [BIN, 'companies', '--technology', TECHNOLOGY, '--max', String(config.smallMax)], {
          env,
          stdout: out,
        }),
      );
    }
    const bigRss = summarize(big.map((run) => run.rssMb));
    const smallRss = summarize(small.map((run) => run.rssMb));
    return {
      companies: config.companies,
      big: { rows: bigRows, rssMb: bigRss, wall: summarize(big.map((run) => run.wallMs)) },
      small: { rows: config.smallMax, rssMb: smallRss, wall: summarize(small.map((run) => run.wallMs)) },
      growth: bigRss.median / smallRss.median,
      sandboxStartupMs: sandbox.startupMs,
    };
  } finally {
    await sandbox.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// 6. A streamed Excel workbook (issue 16): peak RSS of a 100,000-row `-o list.xlsx`

async function benchXlsx() {
  const config = CONFIG.xlsx;
  log(`xlsx: sandbox of ${config.companies.toLocaleString('en-US')} companies`);
  const sandbox = await startSandbox({ companies: config.companies });
  try {
    const env = prospectEnv(sandbox.url);
    const out = join(scratch, 'list.xlsx');
    const runs = [];
    for (let run = 0; run < config.runs; run++) {
      log(`xlsx: ${config.rows.toLocaleString('en-US')} rows, run ${run + 1}/${config.runs}`);
      rmSync(out, { force: true });
      const result = await measure(
        node,
        [BIN, 'companies', '--technology', TECHNOLOGY, '--max', String(config.rows), '-o', out],
        { env },
      );
      if (!existsSync(out)) throw new Error('xlsx: prospect wrote no workbook');
      runs.push(result);
    }
    return {
      rows: config.rows,
      rssMb: summarize(runs.map((run) => run.rssMb)),
      wall: summarize(runs.map((run) => run.wallMs)),
    };
  } finally {
    await sandbox.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// 7. Streaming input (issue 17): contacts reads its input as it arrives

/**
 * Peak RSS of each side of `companies --format ndjson | contacts`, and of `contacts < file` with
 * the same NDJSON, over every jQuery company of the sandbox; and how long after a slow producer's
 * first line the first contacts call reaches the service (the producer then pauses `pauseMs`: a
 * reader that waits for the whole input makes that call only after the pause).
 */
async function benchStreamInput() {
  const config = CONFIG.streamInput;
  log(`stream input: sandbox of ${config.companies.toLocaleString('en-US')} companies`);
  const sandbox = await startSandbox({ companies: config.companies });
  try {
    const env = prospectEnv(sandbox.url);
    const companiesArgs = [BIN, 'companies', '--technology', TECHNOLOGY, '--format', 'ndjson'];
    const contactsArgs = [BIN, 'contacts', '--seniority', config.seniority, '--format', 'csv'];
    const out = join(scratch, 'stream-contacts.csv');
    // What passes through the pipe is kept, for `contacts < file` below.
    const ndjson = join(scratch, 'companies.ndjson');
    const piped = [];
    for (let run = 0; run < config.runs; run++) {
      log(`stream input: companies | contacts, run ${run + 1}/${config.runs}`);
      const before = await sandbox.stats();
      const result = await measurePipe([node, companiesArgs], [node, contactsArgs], {
        env,
        stdout: out,
        teeTo: ndjson,
      });
      piped.push({ ...result, calls: (await sandbox.stats()).contacts - before.contacts });
    }
    const contactRows = (await countLinesStreamed(out)) - 1;
    const domains = await countLinesStreamed(ndjson);
    const inputMb = statSync(ndjson).size / 1e6;
    const firstDomain = JSON.parse(readFirstLine(ndjson)).domain;
    const fromFile = [];
    for (let run = 0; run < config.runs; run++) {
      log(`stream input: contacts < file (${inputMb.toFixed(0)} MB), run ${run + 1}/${config.runs}`);
      fromFile.push(await measure(node, contactsArgs, { env, stdin: ndjson, stdout: out, timeoutMs: 3_600_000 }));
    }
    rmSync(ndjson, { force: true });
    const delays = [];
    for (let run = 0; run < config.slowRuns; run++) {
      log(`stream input: slow producer, run ${run + 1}/${config.slowRuns}`);
      delays.push(await firstCallDelay(sandbox, env, firstDomain, config.pauseMs));
    }
    return {
      companies: config.companies,
      domains,
      inputMb,
      contactRows,
      calls: piped[0].calls,
      pipe: {
        companiesRssMb: summarize(piped.map((run) => run.producer.rssMb)),
        contactsRssMb: summarize(piped.map((run) => run.consumer.rssMb)),
        wall: summarize(piped.map((run) => run.consumer.wallMs)),
        companiesWall: summarize(piped.map((run) => run.producer.wallMs)),
      },
      file: { rssMb: summarize(fromFile.map((run) => run.rssMb)), wall: summarize(fromFile.map((run) => run.wallMs)) },
      pauseMs: config.pauseMs,
      firstCallMs: summarize(delays),
    };
  } finally {
    await sandbox.stop();
  }
}

/**
 * Starts `contacts` on a pipe, gives it a second to start, writes one domain, and polls the
 * sandbox's counter until the first contacts call: the time from the write, in ms (resolution
 * about 10 ms). The producer writes nothing more until `pauseMs` after its line, then ends.
 */
async function firstCallDelay(sandbox, env, domain, pauseMs) {
  // --allow-empty: the first domain may have no contact; what is timed is the first call, not its rows.
  const child = spawn(node, [BIN, 'contacts', '--format', 'csv', '--allow-empty'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text) => (stderr += text));
  const ended = new Promise((resolve) => child.on('close', (code) => resolve(code)));
  await sleep(1000);
  const before = (await sandbox.stats()).contacts;
  child.stdin.write(`${domain}\n`);
  const written = performance.now();
  let delay;
  while (delay === undefined && performance.now() - written < pauseMs) {
    if ((await sandbox.stats()).contacts > before) delay = performance.now() - written;
    else await sleep(10);
  }
  await sleep(Math.max(0, pauseMs - (performance.now() - written)));
  child.stdin.end();
  const code = await ended;
  if (code !== 0) throw new Error(`contacts from a slow producer exited ${code}: ${stderr.slice(-800)}`);
  // No call within the pause: the call came only once the input ended, i.e. at least pauseMs.
  return delay ?? pauseMs;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Newlines in a file of any size (a string cannot hold a gigabyte of NDJSON). */
async function countLinesStreamed(path) {
  let lines = 0;
  for await (const chunk of createReadStream(path)) {
    for (let index = chunk.indexOf(10); index !== -1; index = chunk.indexOf(10, index + 1)) lines++;
  }
  return lines;
}

function readFirstLine(path) {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(64 * 1024);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    return buffer.subarray(0, read).toString('utf8').split('\n')[0];
  } finally {
    closeSync(fd);
  }
}

// ---------------------------------------------------------------------------------------------
// 5. Pipeline end to end

async function benchPipeline() {
  const config = CONFIG.pipeline;
  const sizes = [];
  for (const size of config.sizes) sizes.push(await benchPipelineOver(size, config.concurrency));
  return { concurrency: config.concurrency, sizes };
}

/** `pipeline -t jQuery` over one sandbox size: wall time, peak RSS, leads and calls. */
async function benchPipelineOver({ companies, runs: runCount }, concurrency) {
  log(`pipeline: sandbox of ${companies.toLocaleString('en-US')} companies`);
  const sandbox = await startSandbox({ companies });
  try {
    const env = prospectEnv(sandbox.url);
    const out = join(scratch, 'leads.csv');
    const runs = [];
    for (let run = 0; run < runCount; run++) {
      log(`pipeline: ${companies.toLocaleString('en-US')} companies, run ${run + 1}/${runCount}`);
      const before = await sandbox.stats();
      const result = await measure(
        node,
        [BIN, 'pipeline', '--technology', TECHNOLOGY, '--concurrency', String(concurrency)],
        { env, stdout: out, timeoutMs: 3_600_000 },
      );
      const after = await sandbox.stats();
      runs.push({
        ...result,
        companiesCalls: after.companies - before.companies,
        contactsCalls: after.contacts - before.contacts,
      });
    }
    return {
      companies,
      leads: countLines(out) - 1,
      companiesCalls: runs[0].companiesCalls,
      contactsCalls: runs[0].contactsCalls,
      wall: summarize(runs.map((run) => run.wallMs)),
      rssMb: summarize(runs.map((run) => run.rssMb)),
    };
  } finally {
    await sandbox.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Report

function machine() {
  const gitCommit = (() => {
    try {
      return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      return 'unknown';
    }
  })();
  return {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    ramGb: (totalmem() / 1024 ** 3).toFixed(1),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    commit: gitCommit,
  };
}
