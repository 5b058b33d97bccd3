// The team state store on PostgreSQL (issue 35): `pipeline --state pg:NAME` against `--state DIR` over
// the same sandbox (target: at most 1.3× the wall time), and paid-verification claims per second at 1, 4
// and 16 concurrent `verify` processes on the team ledger, next to the local ledger at 1 process. The
// server is a throwaway cluster (bench/pg-cluster.js), on loopback, beside the sandbox on the same cores.
//
// For bench/run.js: `results.stateStore = await benchStateStore({ scratch, log, config: CONFIG.stateStore })`,
// and stateStoreRows / stateStoreSection in bench/report.js. Alone (needs `npm run build` and postgresql):
//
//   node bench/state-store.js [companies] [runs] [addresses per level]
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FORMAT } from './format.js';
import { BIN, measure, prospectEnv, startSandbox, summarize } from './lib.js';
import { benchDatabase, startCluster, stopCluster } from './pg-cluster.js';

const BENCH_TEAM_KEY = 'bench-team-key-0123456789abcdef0123456789';

export const STATE_STORE_TARGETS = { wallRatio: 1.3 };
const TECHNOLOGY = 'jQuery';
const LEVELS = [1, 4, 16];

/** One cluster and one sandbox for both halves; the cluster is stopped whatever happens. */
export async function benchStateStore({ scratch, log, config }) {
  log('state store: starting a throwaway PostgreSQL cluster');
  const context = { measuredAt: new Date().toISOString(), loadBefore: load(), machine: machine() };
  const cluster = await startCluster();
  try {
    const db = await benchDatabase(cluster, 'prospect_bench');
    log(`state store: sandbox of ${config.companies.toLocaleString('en-US')} companies`);
    const sandbox = await startSandbox({ companies: config.companies });
    try {
      // The team key a state URL needs (docs/team.md); harmless to the local runs.
      const base = { ...prospectEnv(sandbox.url), PROSPECT_STATE_URL: undefined, PROSPECT_TEAM_KEY: BENCH_TEAM_KEY };
      const pipeline = await pipelineRuns({ scratch, log, config, base, url: db.url });
      const claims = await claimRuns({ scratch, log, config, base, url: db.url, sandbox });
      return { ...context, companies: config.companies, ...pipeline, claims, loadAfter: load() };
    } finally {
      await sandbox.stop();
    }
  } finally {
    stopCluster(cluster);
  }
}

const load = () => loadavg().map((n) => n.toFixed(2));
const machine = () => `${availableParallelism()} CPUs (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}`;

/** A HOME of its own (the verification ledger and the config live under it), and no XDG override. */
function homeEnv(scratch, name) {
  const home = join(scratch, 'homes', name);
  mkdirSync(home, { recursive: true });
  return { HOME: home, XDG_CACHE_HOME: join(home, '.cache'), XDG_CONFIG_HOME: join(home, '.config') };
}

/** `pipeline -t jQuery` with a fresh state directory and a fresh pg job, interleaved; the leads must match. */
async function pipelineRuns({ scratch, log, config, base, url }) {
  const runs = { dir: [], pg: [] };
  const outputs = { dir: new Set(), pg: new Set() };
  for (let run = 0; run < config.runs; run++) {
    for (const which of ['dir', 'pg']) {
      log(`state store: pipeline --state ${which === 'dir' ? 'DIR' : 'pg:NAME'}, run ${run + 1}/${config.runs}`);
      const state = which === 'dir' ? join(scratch, `state-${run}`) : `pg:bench-${run}`;
      const out = join(scratch, `leads-${which}.csv`);
      const env = { ...base, ...homeEnv(scratch, `pipeline-${which}-${run}`) };
      if (which === 'pg') env.PROSPECT_STATE_URL = url;
      const args = [BIN, 'pipeline', '--technology', TECHNOLOGY, '--state', state, '-o', out];
      runs[which].push(await measure(process.execPath, args, { env, timeoutMs: 3_600_000 }));
      outputs[which].add(readFileSync(out, 'utf8'));
      rmSync(out, { force: true });
    }
  }
  const [dirOut, pgOut] = [[...outputs.dir], [...outputs.pg]];
  if (dirOut.length !== 1 || pgOut.length !== 1 || dirOut[0] !== pgOut[0])
    throw new Error('state store: the DIR and pg runs wrote different leads');
  const figures = (list) => ({
    wall: summarize(list.map((run) => run.wallMs)),
    rssMb: summarize(list.map((run) => run.rssMb)),
    // The client's own CPU (GNU time): the server's work is not in it, but a loaded machine moves it least.
    cpu: list[0].cpuMs === undefined ? undefined : summarize(list.map((run) => run.cpuMs)),
  });
  const dir = figures(runs.dir);
  const pg = figures(runs.pg);
  return {
    leads: dirOut[0].trimEnd().split('\n').length - 1,
    dir,
    pg,
    wallRatio: pg.wall.median / dir.wall.median,
    // Each pg run against the DIR run just before it: the spread a shared machine adds to the ratio.
    pairRatios: summarize(runs.pg.map((run, index) => run.wallMs / runs.dir[index].wallMs)),
  };
}

/**
 * `verify --file` of distinct addresses (never seen before by any ledger, so every one is claimed and
 * paid), split among `processes` processes started at once, each with its own HOME. Claims per second
 * = addresses ÷ the wall time from the first start to the last exit. Units are the sandbox's counter.
 */
async function claimRuns({ scratch, log, config, base, url, sandbox }) {
  const levels = [{ store: 'local', processes: 1 }, ...LEVELS.map((processes) => ({ store: 'pg', processes }))];
  const results = [];
  let next = 0;
  for (const { store, processes } of levels) {
    log(`state store: verify, ${store} ledger, ${processes} process(es), ${config.addresses} addresses`);
    const per = Math.ceil(config.addresses / processes);
    const jobs = [];
    const unitsBefore = (await sandbox.fullStats()).units;
    const started = process.hrtime.bigint();
    for (let index = 0; index < processes; index++) {
      const file = join(scratch, `addresses-${store}-${processes}-${index}.txt`);
      const lines = Array.from({ length: per }, () => `person${next++}@bench-claims.example.com`);
      writeFileSync(file, `${lines.join('\n')}\n`);
      const env = { ...base, ...homeEnv(scratch, `verify-${store}-${processes}-${index}`) };
      if (store === 'pg') env.PROSPECT_STATE_URL = url;
      const args = [BIN, 'verify', '--file', file, '--yes', '--verify-budget', String(per), '-f', 'csv'];
      jobs.push(measure(process.execPath, args, { env, timeoutMs: 600_000 }));
    }
    await Promise.all(jobs);
    const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
    const addresses = per * processes;
    const units = unitsDelta(unitsBefore, (await sandbox.fullStats()).units);
    results.push({ store, processes, addresses, wallMs, units, claimsPerSecond: (addresses / wallMs) * 1000 });
  }
  return results;
}

/** Units the sandbox charged between two reads of its stats (every plan summed). */
function unitsDelta(before, after) {
  const total = (units) =>
    typeof units === 'number' ? units : Object.values(units ?? {}).reduce((sum, value) => sum + total(value), 0);
  return total(after) - total(before);
}

/** The summary table's rows for the section, in bench/report.js's format (its helpers passed in). */
export function stateStoreRows(s, { int, spread, ms, x, verdict }) {
  const local = s.claims.find((level) => level.store === 'local');
  const claims = s.claims
    .filter((level) => level.store === 'pg')
    .map((level) => `${level.processes}: ${int(level.claimsPerSecond)}/s`)
    .join(', ');
  const { wallRatio } = STATE_STORE_TARGETS;
  return [
    `| 12 | \`pipeline -t ${TECHNOLOGY} --state pg:NAME\`, ${int(s.companies)} companies, ${int(s.leads)} leads: ` +
      `wall time | ${spread(s.pg.wall, ms)} = ${x(s.wallRatio)} | \`--state DIR\`: ${spread(s.dir.wall, ms)} | ` +
      `≤ ${wallRatio}× | ${verdict(s.wallRatio <= wallRatio)} |`,
    `| 12 | \`verify\` claims per second on the team ledger, by processes | ${claims} | ` +
      `local ledger, 1 process: ${int(local.claimsPerSecond)}/s | (reported) |  |`,
  ];
}

/** The section's text for BENCHMARKS.md. */
export function stateStoreSection(s, { int, spread, ms, mb, x, verdict }) {
  const table = s.claims.map(
    (level) =>
      `| ${level.store === 'pg' ? 'team (PostgreSQL)' : 'local (files)'} | ${level.processes} | ` +
      `${int(level.addresses)} | ${int(level.units)} | ${ms(level.wallMs)} | ${int(level.claimsPerSecond)} |`,
  );
  return [
    '## 12. The team state store on PostgreSQL',
    '',
    [
      `\`prospect pipeline -t ${TECHNOLOGY} -o out.csv\` over a sandbox of ${int(s.companies)} companies`,
      `(${int(s.leads)} leads), with a fresh \`--state DIR\` and with a fresh \`--state pg:NAME\``,
      '(`PROSPECT_STATE_URL` naming a throwaway PostgreSQL cluster on loopback, started by',
      'bench/pg-cluster.js with fsync off, as the tests start theirs), interleaved; both write the same bytes.',
      `\`--state pg:NAME\` ${spread(s.pg.wall, ms)}, peak RSS ${spread(s.pg.rssMb, mb)};`,
      `\`--state DIR\` ${spread(s.dir.wall, ms)}, peak RSS ${spread(s.dir.rssMb, mb)}: ${x(s.wallRatio)}`,
      `(each pg run over the DIR run before it: ${spread(s.pairRatios, x)}).`,
      s.pg.cpu && s.dir.cpu
        ? `The client's CPU time (user + system; the server's is not in it): ${spread(s.pg.cpu, ms)} against ` +
          `${spread(s.dir.cpu, ms)} (${x(s.pg.cpu.median / s.dir.cpu.median)}).`
        : '',
      `Target ≤ ${STATE_STORE_TARGETS.wallRatio}×: ${verdict(s.wallRatio <= STATE_STORE_TARGETS.wallRatio)}.`,
    ]
      .filter(Boolean)
      .join(' '),
    '',
    [
      'Claims per second: `verify --file F --yes --verify-budget N` of addresses no ledger has seen, split among',
      'N processes started at once, each with its own HOME; claims/s = addresses ÷ the wall time from the first',
      "start to the last exit (start-up included). Units are the sandbox's own counter. The server, the sandbox",
      'and the processes share the same cores.',
      `Measured on ${s.measuredAt.slice(0, 10)} ${s.measuredAt.slice(11, 16)} UTC on ${s.machine};`,
      `load average (1, 5, 15 min) before: ${s.loadBefore.join(', ')}; after: ${s.loadAfter.join(', ')}.`,
    ].join(' '),
    '',
    '| Ledger | Processes | Addresses | Units charged | Wall time | Claims/s |',
    '|---|---|---|---|---|---|',
    ...table,
    '',
  ];
}

// Run alone: prints the figures as JSON, the summary rows and the section.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [companies = 20_000, runs = 3, addresses = 1_600] = process.argv.slice(2).map(Number);
  const scratch = mkdtempSync(join(tmpdir(), 'prospect-bench-state-'));
  try {
    const result = await benchStateStore({
      scratch,
      log: (text) => process.stderr.write(`bench: ${text}\n`),
      config: { companies, runs, addresses },
    });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${stateStoreRows(result, FORMAT).join('\n')}\n\n`);
    process.stdout.write(`${stateStoreSection(result, FORMAT).join('\n')}\n`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
