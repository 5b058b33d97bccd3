// `companies --changes` against the export it adds to (issue 45): the same listing of November's
// crawl exported plainly and with --changes against a state holding October's snapshot (a fresh
// copy each run), interleaved. Targets: --changes under 250 MB of peak RSS and within 1.3× the plain
// export's wall time. The diff's row count is printed beside the listing's.
//
//   npm run build && node bench/changes.js [companies] [runs]
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, measure, prospectEnv, startSandbox, summarize } from './lib.js';

export const CHANGES_TARGETS = { rssMb: 250, wallRatio: 1.3 };
const TECHNOLOGY = 'jQuery';

export async function benchChanges({ scratch, log, config }) {
  const { companies, runs: runCount } = config;
  log(`changes: sandboxes of ${companies.toLocaleString('en-US')} companies, October and November crawls`);
  const october = await startSandbox({ companies, asOf: '2026-10-15' });
  const november = await startSandbox({ companies, asOf: '2026-11-15' });
  const primed = join(scratch, 'changes-primed');
  const runs = { plain: [], changes: [] };
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
      log(`changes: --changes, run ${run + 1}/${runCount}`);
      const state = join(scratch, 'changes-state');
      rmSync(state, { recursive: true, force: true });
      cpSync(primed, state, { recursive: true });
      const diffOut = join(scratch, 'changes-diff.csv');
      const args = [BIN, 'companies', '-t', TECHNOLOGY, '--state', state, '--changes'];
      runs.changes.push(await measure(process.execPath, args, { env, stdout: diffOut, timeoutMs: 3_600_000 }));
      rows.diff = lines(diffOut);
    }
  } finally {
    await Promise.all([october.stop(), november.stop()]);
  }
  const plainWall = summarize(runs.plain.map((run) => run.wallMs));
  const changesWall = summarize(runs.changes.map((run) => run.wallMs));
  return {
    companies,
    rows,
    plain: { wall: plainWall, rss: summarize(runs.plain.map((run) => run.rssMb)) },
    changes: { wall: changesWall, rss: summarize(runs.changes.map((run) => run.rssMb)) },
    wallRatio: changesWall.median / plainWall.median,
  };
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
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
