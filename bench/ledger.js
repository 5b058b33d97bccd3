// `pipeline --only-new` against a long export history (issue 17): the same run with an exports
// ledger of 10,000,000 keys and with an empty one, interleaved, each from a fresh copy of its state
// directory (a run adds its own keys to the ledger, so the next run on the same state would write
// nothing). Targets: the big ledger's run within 1.2× the empty one's peak RSS and 1.3× its wall time.
// The two runs must write the same leads: none of the 10,000,000 random keys is a real lead's.
//
// For bench/run.js: `results.ledger = await benchLedger({ scratch, log, config: CONFIG.ledger })`
// with CONFIG.ledger = { companies: 20_000, keys: 10_000_000, runs: 3 } (quick: { companies: 5_000,
// keys: 1_000_000, runs: 1 }), and ledgerRows(results.ledger, FORMAT) in bench/report.js. Alone:
//
//   npm run build && node bench/ledger.js [keys] [runs] [companies]
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FORMAT } from './format.js';
import { BIN, ROOT, measure, prospectEnv, startSandbox, summarize } from './lib.js';

export const LEDGER_TARGETS = { rssRatio: 1.2, wallRatio: 1.3 };
const TECHNOLOGY = 'jQuery';

/** Two state directories made once (an empty ledger, one of `keys` keys), then runs from fresh copies of each. */
export async function benchLedger({ scratch, log, config }) {
  const { companies, keys, runs: runCount } = config;
  const states = { empty: join(scratch, 'ledger-empty'), big: join(scratch, 'ledger-big') };
  log(`ledger: building a ledger of ${keys.toLocaleString('en-US')} keys`);
  const built = Date.now();
  buildLedger(states.empty, 0);
  buildLedger(states.big, keys);
  const buildSeconds = (Date.now() - built) / 1000;
  const ledgerMb = statSync(join(states.big, 'exported.sqlite')).size / 1024 / 1024;

  log(`ledger: sandbox of ${companies.toLocaleString('en-US')} companies`);
  const sandbox = await startSandbox({ companies });
  const runs = { empty: [], big: [] };
  const leads = { empty: new Set(), big: new Set() };
  try {
    const env = prospectEnv(sandbox.url);
    for (let run = 0; run < runCount; run++) {
      for (const which of ['empty', 'big']) {
        log(`ledger: ${which} ledger, run ${run + 1}/${runCount}`);
        const state = join(scratch, `ledger-run-${which}`);
        const out = join(scratch, `ledger-${which}.csv`);
        rmSync(state, { recursive: true, force: true });
        // A copy, not the original: each run starts from the same ledger. Written to disk before the
        // run, so that no writeback of the copy runs beside it.
        cpSync(states[which], state, { recursive: true });
        execFileSync('sync');
        const result = await measure(
          process.execPath,
          [BIN, 'pipeline', '--technology', TECHNOLOGY, '--state', state, '--only-new', '-o', out],
          { env, timeoutMs: 3_600_000 },
        );
        runs[which].push(result);
        leads[which].add(readFileSync(out, 'utf8').trimEnd().split('\n').length - 1);
      }
    }
  } finally {
    await sandbox.stop();
    for (const which of ['empty', 'big'])
      rmSync(join(scratch, `ledger-run-${which}`), { recursive: true, force: true });
  }
  const [emptyLeads, bigLeads] = [[...leads.empty], [...leads.big]];
  if (emptyLeads.length !== 1 || bigLeads.length !== 1 || emptyLeads[0] !== bigLeads[0]) {
    throw new Error(
      `ledger: the runs wrote different leads (empty ledger: ${emptyLeads.join(', ')}; ` +
        `${keys} keys: ${bigLeads.join(', ')})`,
    );
  }
  const figures = (list) => ({
    wall: summarize(list.map((run) => run.wallMs)),
    rssMb: summarize(list.map((run) => run.rssMb)),
    cpu: list[0].cpuMs === undefined ? undefined : summarize(list.map((run) => run.cpuMs)),
  });
  const empty = figures(runs.empty);
  const big = figures(runs.big);
  return {
    companies,
    keys,
    leads: emptyLeads[0],
    ledgerMb,
    buildSeconds,
    empty,
    big,
    rssRatio: big.rssMb.median / empty.rssMb.median,
    wallRatio: big.wall.median / empty.wall.median,
    cpuRatio: big.cpu && empty.cpu ? big.cpu.median / empty.cpu.median : undefined,
  };
}

/** A state directory whose ledger holds `keys` random keys (scripts/build-ledger.mjs). */
function buildLedger(dir, keys) {
  rmSync(dir, { recursive: true, force: true });
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-ledger.mjs'), dir, String(keys)], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** The summary table's rows for the section, in bench/report.js's format (its helpers passed in). */
export function ledgerRows(l, { int, spread, ms, mb, x, verdict }) {
  const what =
    `\`pipeline -t ${TECHNOLOGY} --state --only-new\`, ${int(l.companies)} companies, ${int(l.leads)} leads, ` +
    `ledger of ${int(l.keys)} keys (${mb(l.ledgerMb)}) vs empty`;
  const row = (figure, big, empty, ratio, target, met) =>
    `| 9 | ${what}: ${figure} | ${big} = ${x(ratio)} | empty ledger: ${empty} | ${target} | ${met} |`;
  const { rssRatio, wallRatio } = LEDGER_TARGETS;
  return [
    row(
      'peak RSS',
      spread(l.big.rssMb, mb),
      spread(l.empty.rssMb, mb),
      l.rssRatio,
      `≤ ${rssRatio}×`,
      verdict(l.rssRatio <= rssRatio),
    ),
    row(
      'wall time',
      spread(l.big.wall, ms),
      spread(l.empty.wall, ms),
      l.wallRatio,
      `≤ ${wallRatio}×`,
      verdict(l.wallRatio <= wallRatio),
    ),
    ...(l.cpuRatio === undefined
      ? []
      : [
          row('CPU time (user + system)', spread(l.big.cpu, ms), spread(l.empty.cpu, ms), l.cpuRatio, '(reported)', ''),
        ]),
  ];
}

// Run alone: prints the figures as JSON and the two summary rows.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [keys = 10_000_000, runs = 3, companies = 20_000] = process.argv.slice(2).map(Number);
  const scratch = mkdtempSync(join(tmpdir(), 'prospect-bench-ledger-'));
  mkdirSync(scratch, { recursive: true });
  try {
    const result = await benchLedger({
      scratch,
      log: (text) => process.stderr.write(`bench: ${text}\n`),
      config: { companies, keys, runs },
    });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${ledgerRows(result, FORMAT).join('\n')}\n`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
