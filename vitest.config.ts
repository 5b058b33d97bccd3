import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ when it is stale (the spawned-binary tests run it) and owns the run's scratch root.
    globalSetup: ['test/helpers/global-setup.ts'],
    // Removes each file's scratch directories and stray child processes when the file ends.
    setupFiles: ['test/helpers/file-setup.ts'],
    // Spawned-binary tests mostly wait on child processes and servers: three files at once keep two cores busy.
    pool: 'forks',
    maxWorkers: 3,
    // Test files share their worker process: the sandbox dataset (cached per process) and the modules
    // are built once per worker, not once per file. Every file still starts its own sandboxes and
    // scratch directories (test/helpers), so none depends on another's state.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
