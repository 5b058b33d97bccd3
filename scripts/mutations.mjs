#!/usr/bin/env node
/**
 * The ten hand mutations of issue 44 (item 4), each re-applied to a copy of the tree and run against
 * its related test files: a mutation must fail an assertion (not a timeout) within 60 s of tests.
 * The copy is of HEAD (commit first); dist/ is built from the mutated source where the tests run it.
 * Each is a search/replace of a line as the source has it today; a search that no longer matches is
 * reported as such, never silently skipped. Usage: node scripts/mutations.mjs [name-substring...]
 * Prints one row per mutation (killed/survived/timeout/stale; the seconds vitest took, start-up
 * included, and in brackets the test files' own) and exits 1 unless all are killed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

/** build: the related tests run dist/ (runInProcess), so the mutated source is built first. */
const MUTATIONS = [
  {
    name: 'budget not a ceiling after a lost answer (>= to >)',
    file: 'src/core/verification/verifier.ts',
    search: 'if (this.reserved >= this.run.budget ||',
    replace: 'if (this.reserved > this.run.budget ||',
    tests: ['test/core/verification/verifier.test.ts'],
  },
  {
    name: 'no unit reserved for a retry after a lost answer',
    file: 'src/core/verification/verifier.ts',
    search: '        this.reserved += 1;\n        call.reserved += 1;\n',
    replace: '',
    tests: ['test/core/verification/verifier.test.ts'],
  },
  {
    name: 'a resume forgets what lost answers may have cost',
    file: 'src/core/verification/spend-plan.ts',
    search: 'const spent = verifier.run.unitsSpent + verifier.run.mayAlsoHaveCost;',
    replace: 'const spent = verifier.run.unitsSpent;',
    tests: ['test/core/verification/spend-plan.test.ts'],
  },
  {
    name: "pg discard() keeps an unfinished run's lead reservations",
    file: 'src/core/state-store/pg/job.ts',
    search: '      await query(\n        `DELETE FROM ${SCHEMA}.exported e WHERE job = $1 AND run_id = $2',
    replace: '      if (false) await query(\n        `DELETE FROM ${SCHEMA}.exported e WHERE job = $1 AND run_id = $2',
    tests: ['test/core/state-store/pg/job.test.ts'],
  },
  {
    name: 'stored chunks not checked against the checkpoint',
    file: 'src/core/state-store/pg/job.ts',
    search: 'if (output.length !== checkpoint.output_bytes || keys.length !== checkpoint.keys_bytes)',
    replace: 'if (false)',
    tests: ['test/core/state-store/pg/job.test.ts'],
  },
  {
    name: '--deliverable-only keeps addresses of unknown age',
    file: 'src/core/contacts/row-filters.ts',
    search: "return row.email_freshness === 'fresh' ? null : 'stale_unverified';",
    replace: "return row.email_freshness !== 'stale' ? null : 'stale_unverified';",
    tests: ['test/core/contacts/row-filters.test.ts'],
  },
  {
    name: 'the "(N in all)" total leaves out no_email',
    file: 'src/core/contacts/row-filters.ts',
    search: 'return UNDELIVERABLE_KINDS.reduce((sum, kind) => sum + counts[kind], 0);',
    replace:
      "return UNDELIVERABLE_KINDS.filter((kind) => kind !== 'no_email').reduce((sum, kind) => sum + counts[kind], 0);",
    tests: ['test/core/contacts/row-filters.test.ts'],
  },
  {
    name: '--preset misses a column spelt "Company Name"',
    file: 'src/core/contacts/kept-columns.ts',
    search:
      '      const found = header.find((column) => sameColumn(column, name));\n      if (found !== undefined) add',
    replace: '      const found = header.find((column) => column === name);\n      if (found !== undefined) add',
    tests: ['test/core/contacts/kept-columns.test.ts'],
  },
  {
    name: '--max cuts a domain without recording stopped_at_max',
    file: 'src/core/contacts/job.ts',
    search: 'if (rows.length < domainRows.rows.length) run.counts.stoppedAtMax = true;',
    replace: '',
    tests: ['test/core/contacts/job.max.test.ts'],
    build: true,
  },
  {
    name: "another user's live lock taken over (EPERM read as gone)",
    file: 'src/io/pid-file.ts',
    search: "return (error as NodeJS.ErrnoException).code !== 'EPERM';",
    replace: 'return true;',
    // Only a non-root process meets EPERM: the test runs dist/io/pid-file.js as nobody (setpriv).
    tests: ['test/io/pid-file.test.ts', 'test/io/own-directory.cli.test.ts'],
    build: true,
  },
];

/** The committed tree (HEAD), so that an edit in progress is never mutated, with node_modules linked. */
function copyTree(into) {
  execFileSync('sh', ['-c', `git archive HEAD | tar -x -C '${into}'`], { cwd: ROOT });
  symlinkSync(join(ROOT, 'node_modules'), join(into, 'node_modules'));
}

function seconds(since) {
  return ((performance.now() - since) / 1000).toFixed(1);
}

function runOne(mutation) {
  const copy = mkdtempSync(join(tmpdir(), 'prospect-mutation-'));
  try {
    copyTree(copy);
    const path = join(copy, mutation.file);
    const source = readFileSync(path, 'utf8');
    if (!source.includes(mutation.search)) return { outcome: 'stale: search not found', seconds: '-' };
    writeFileSync(path, source.replace(mutation.search, mutation.replace));
    // dist/ copied after the mutation is newer than it: the global setup builds only when asked here.
    cpSync(join(ROOT, 'dist'), join(copy, 'dist'), { recursive: true });
    if (mutation.build) execFileSync('npm', ['run', '--silent', 'build'], { cwd: copy, stdio: 'ignore' });
    const report = join(copy, 'vitest-report.json');
    const started = performance.now();
    const run = spawnSync('npx', ['vitest', 'run', ...mutation.tests, '--reporter=json', `--outputFile=${report}`], {
      cwd: copy,
      encoding: 'utf8',
      env: { ...process.env, FORCE_COLOR: '0' },
    });
    const took = seconds(started);
    if (run.status === 0) return { outcome: 'SURVIVED', seconds: took };
    let results;
    try {
      results = JSON.parse(readFileSync(report, 'utf8')).testResults;
    } catch {
      return { outcome: `error (exit ${run.status})`, seconds: took, detail: run.stderr.slice(-2000) };
    }
    const failures = results
      .flatMap((file) => [file.message ?? '', ...file.assertionResults.flatMap((test) => test.failureMessages)])
      .filter(Boolean);
    if (failures.length === 0) return { outcome: `error (exit ${run.status})`, seconds: took, detail: run.stderr };
    const timedOut = failures.every((message) => /timed out/i.test(message));
    // The files' own time, from their first test's start to their last one's end: no start-up or build.
    const testsMs =
      Math.max(...results.map((file) => file.endTime)) - Math.min(...results.map((file) => file.startTime));
    const outcome = timedOut ? 'TIMEOUT' : `killed (${failures.length} failed)`;
    return { outcome, seconds: `${took} (tests ${(testsMs / 1000).toFixed(1)})` };
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

const wanted = process.argv.slice(2);
const chosen = MUTATIONS.filter((m) => wanted.length === 0 || wanted.some((word) => m.name.includes(word)));
let allKilled = true;
for (const mutation of chosen) {
  const { outcome, seconds: took, detail } = runOne(mutation);
  if (!outcome.startsWith('killed')) allKilled = false;
  if (detail) process.stderr.write(`${detail}\n`);
  process.stdout.write(
    `${outcome.padEnd(22)} ${String(took).padStart(16)} s  ${mutation.name}  (${mutation.tests.join(' ')})\n`,
  );
}
process.exit(allKilled ? 0 : 1);
