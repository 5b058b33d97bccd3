/** Runs around every test file: what a file made in the scratch root, any child it left running and the in-process CLI's worker go with it. */
import { afterAll } from 'vitest';
import { stopInProcessCli, stopStrayChildren } from './cli.js';
import { removeScratchDirs } from './scratch.js';

afterAll(async () => {
  await stopStrayChildren();
  await stopInProcessCli();
  await removeScratchDirs();
});
