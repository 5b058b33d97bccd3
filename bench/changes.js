// `companies --changes` against the export it adds to (issue 45): the same listing of November's
// crawl exported plainly, with --state alone (which keeps the snapshot too) and with --changes,
// each state a fresh copy of one holding October's snapshot, interleaved. Targets: --changes under
// 250 MB of peak RSS and within 1.3× the plain export's wall time. The diff's row count is printed
// beside the listing's.
//
// For bench/run.js: `results.changes = await benchChanges({ scratch, log, config: CONFIG.changes })`,
// and changesRows / changesSection in bench/report.js. Alone:
//
//   npm run build && node bench/changes.js [companies] [runs]
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FORMAT } from './format.js';
import { BIN, measure, prospectEnv, startSandbox, summarize } from './lib.js';

export const CHANGES_TARGETS = { rssMb: 250, wallRatio: 1.3 };
const TECHNOLOGY = 'jQuery';

export async function benchChanges({ scratch, log, config }) {
  const { companies, runs: runCount } = config;
  const context = { measuredAt: new Date().toISOString(), loadBefore: load(), machine: machine() };
  log(`changes: sandboxes of ${companies.toLocaleString('en-US')} companies, October and November crawls`);
  const october = await startSandbox({ companies, asOf: '2026-10-15' });
  const november = await startSandbox({ companies, asOf: '2026-11-15' });
  const primed = join(scratch, 'changes-primed');
  const runs = { plain: [], state: [], changes: [] };
  const rows = {};
  try {
    log('changes: the October listing into a state');
    const first = await measure(process.execPath, [BIN, 'companies', '-t', TECHNOLOGY, '--state', primed], {
      env: prospectEnv(october.url),
      timeoutMs: 3_600_000,
    });
    runs.prime = first;
    const env = prospectEnv(november.url);
    for (let run = 0; run < runCount; run++) {
      log(`changes: plain export, run ${run + 1}/${runCount}`);
      const plainOut = join(scratch, 'changes-plain.csv');
      runs.plain.push(await measure(process.execPath, [BIN, 'companies', '-t', TECHNOLOGY], { env, stdout: plainOut }));
      rows.listing = lines(plainOut);
      const state = join(scratch, 'changes-state');
      for (const [kind, flags] of [
        ['state', ['--state', state]],
        ['changes', ['--state', state, '--changes']],
      ]) {
        log(`changes: ${flags.join(' ')}, run ${run + 1}/${runCount}`);
        rmSync(state, { recursive: true, force: true });
        cpSync(primed, state, { recursive: true });
        const out = join(scratch, `changes-${kind}.csv`);
        const args = [BIN, 'companies', '-t', TECHNOLOGY, ...flags];
        runs[kind].push(await measure(process.execPath, args, { env, stdout: out, timeoutMs: 3_600_000 }));
        if (kind === 'changes') rows.diff = lines(out);
      }
    }
  } finally {
    await Promise.all([october.stop(), november.stop()]);
  }
  const figures = (of) => ({
    wall: summarize(of.map((run) => run.wallMs)),
    rss: summarize(of.map((run) => run.rssMb)),
    cpu: of.every((run) => run.cpuMs !== undefined) ? summarize(of.map((run) => run.cpuMs)) : undefined,
  });
  const plain = figures(runs.plain);
  const changes = figures(runs.changes);
  const kept = figures(runs.state);
  return {
    ...context,
    companies,
    rows,
    plain,
    state: kept,
    changes,
    // Against the same --state export without --changes: what the diff adds to keeping the snapshot.
    stateRatio: changes.wall.median / kept.wall.median,
    wallRatio: changes.wall.median / plain.wall.median,
    // Each --changes run over the plain run just before it: the load moves both alike.
    pairRatios: summarize(runs.changes.map((run, index) => run.wallMs / runs.plain[index].wallMs)),
    cpuRatio: plain.cpu && changes.cpu ? changes.cpu.median / plain.cpu.median : undefined,
    loadAfter: load(),
  };
}

const load = () => loadavg().map((n) => n.toFixed(2));
const machine = () => `${availableParallelism()} CPUs (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}`;

/** The summary rows of section 16. */
export function changesRows(c, { int, spread, ms, mb, x, verdict }) {
  const listing = `\`companies -t ${TECHNOLOGY} --changes\`, ${int(c.rows.listing)} companies`;
  return [
    `| 16 | ${listing}: wall time | ${spread(c.changes.wall, ms)} = ${x(c.wallRatio)} | ` +
      `plain export: ${spread(c.plain.wall, ms)} | ≤ ${CHANGES_TARGETS.wallRatio}× | ` +
      `${verdict(c.wallRatio <= CHANGES_TARGETS.wallRatio)} |`,
    `| 16 | ${listing}: peak RSS | ${spread(c.changes.rss, mb)} | plain export: ${spread(c.plain.rss, mb)} | ` +
      `< ${CHANGES_TARGETS.rssMb} MB | ${verdict(c.changes.rss.max < CHANGES_TARGETS.rssMb)} |`,
  ];
}

/** Section 16 of BENCHMARKS.md. */
export function changesSection(c, { int, spread, ms, mb, x, verdict }) {
  const cpu =
    c.cpuRatio === undefined
      ? ''
      : `CPU time (user + system, which the load moves least): ${spread(c.changes.cpu, ms)} against ` +
        `${spread(c.plain.cpu, ms)} (${x(c.cpuRatio)}).`;
  return [
    '## 16. `companies --changes` against the plain export',
    '',
    [
      `A sandbox of ${int(c.companies)} companies: \`companies -t ${TECHNOLOGY}\` of November's crawl`,
      `(${int(c.rows.listing)} companies) exported plainly, and with \`--state DIR --changes\` against a fresh`,
      `copy of a state holding October's snapshot (${int(c.rows.diff)} rows of changes), interleaved.`,
      `Wall time: ${spread(c.changes.wall, ms)} against ${spread(c.plain.wall, ms)}: ${x(c.wallRatio)}`,
      `(each --changes run over the plain run before it: ${spread(c.pairRatios, x)}). ${cpu}`,
      c.state
        ? `The same \`--state DIR\` export without \`--changes\` (it keeps the snapshot too): ` +
          `${spread(c.state.wall, ms)}, so \`--changes\` is ${x(c.stateRatio)} of it.`
        : '',
      `Peak RSS ${spread(c.changes.rss, mb)} against ${spread(c.plain.rss, mb)}.`,
      `Targets: ≤ ${CHANGES_TARGETS.wallRatio}× the wall time, ${verdict(c.wallRatio <= CHANGES_TARGETS.wallRatio)};`,
      `< ${CHANGES_TARGETS.rssMb} MB, ${verdict(c.changes.rss.max < CHANGES_TARGETS.rssMb)}.`,
      `Measured on ${c.measuredAt.slice(0, 10)} ${c.measuredAt.slice(11, 16)} UTC on ${c.machine};`,
      `load average (1, 5, 15 min) before: ${c.loadBefore.join(', ')}; after: ${c.loadAfter.join(', ')}.`,
    ]
      .filter(Boolean)
      .join(' '),
    '',
  ];
}

function lines(path) {
  return readFileSync(path, 'utf8').trimEnd().split('\n').length - 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [companies = 1_000_000, runs = 1] = process.argv.slice(2).map(Number);
  const scratch = mkdtempSync(join(tmpdir(), 'prospect-bench-changes-'));
  try {
    const result = await benchChanges({ scratch, log: (line) => console.error(line), config: { companies, runs } });
    console.log(JSON.stringify(result, null, 2));
    console.log(`${changesRows(result, FORMAT).join('\n')}\n\n${changesSection(result, FORMAT).join('\n')}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
