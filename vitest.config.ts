import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that take longest from start to end, so they start first and never make the run's tail: the
 * five that mostly wait (on rate limits, retry back-offs and PostgreSQL), then the two whose
 * processes run one after another (each of their tests waits for the last).
 */
const LONGEST = [
  'test/core/state-store/team.cli.test.ts',
  'test/core/state-store/pg/store-failure.cli.test.ts',
  'test/api/pacer.cli.test.ts',
  'test/api/pacer.nginx.cli.test.ts',
  'test/api/retry.cli.test.ts',
  'test/examples.cli.test.ts',
  'test/golden/outputs.test.ts',
];
/**
 * The in-process files that take longest (seconds of CPU each, or of waiting): next, so that none
 * starts after the spawned-binary files and runs alone at the end (variants did: 47 s, the last 4 s
 * alone, on a loaded machine).
 */
const LONG_IN_PROCESS = [
  'test/sandbox/variants.test.ts',
  // Mostly waits on npm pack and npm install (15-25 s of wall): among "the rest" it started after every
  // spawned-binary file, so it could end the run alone.
  'test/packages/client.test.ts',
  'test/api/retry.http.test.ts',
  'test/sandbox/dataset/dataset.test.ts',
  'test/io/domains.test.ts',
  'test/core/companies/filters.aim.test.ts',
  'test/package.test.ts',
];
/** The spawned-binary files (test/README.md): slower than the in-process ones, so they go next. */
const SPAWNS = /\/test\/(commands|golden)\/|\.cli\.test\.ts$/;

/**
 * The order files start in, for a short tail on two cores: LONGEST, LONG_IN_PROCESS, then the
 * spawned-binary files, then the rest, each group in vitest's own order (by the last run's durations when it has them,
 * else largest file first, which on a clean clone put the golden outputs last). With
 * --sequence.shuffle the files are shuffled instead (seeded, as vitest's own shuffle).
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const { shuffle, seed } = this.ctx.config.sequence;

    if (shuffle) return shuffled(files, seed);
    const rank = (file: TestSpecification) => {
      const first = [...LONGEST, ...LONG_IN_PROCESS].findIndex((path) => file.moduleId.endsWith(path));
      if (first >= 0) return first;
      const after = LONGEST.length + LONG_IN_PROCESS.length;
      return SPAWNS.test(file.moduleId) ? after : after + 1;
    };
    // Array.prototype.sort is stable: within a rank, vitest's order stays.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

/** Fisher-Yates with a small seeded generator (mulberry32). */
function shuffled<T>(items: T[], seed: number): T[] {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const result = [...items];
  for (let i = result.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [result[i], result[j]] = [result[j]!, result[i]!];
  }
  return result;
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ when it is stale (the spawned-binary tests run it) and owns the run's scratch root.
    globalSetup: ['test/helpers/global-setup.ts'],
    // Removes each file's scratch directories and stray child processes when the file ends.
    setupFiles: ['test/helpers/file-setup.ts'],
    // Four of the longest files mostly wait on limits and back-offs, so six at once keep two cores busy
    // from the start (with four, the cores were 15-60% idle for the first half minute).
    pool: 'forks',
    maxWorkers: 6,
    // Test files share their worker process: the sandbox dataset (cached per process) and the modules
    // are built once per worker, not once per file. Every file still starts its own sandboxes and
    // scratch directories (test/helpers), so none depends on another's state.
    isolate: false,
    sequence: { sequencer: LongestFirst },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
