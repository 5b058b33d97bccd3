import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ when it is stale (the spawned-binary tests run it) and owns the run's scratch root.
    globalSetup: ['test/helpers/global-setup.ts'],
    // Removes each file's scratch directories and stray child processes when the file ends.
    setupFiles: ['test/helpers/file-setup.ts'],
    // Spawned-binary tests start servers and child processes; two cores, so keep it modest.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
