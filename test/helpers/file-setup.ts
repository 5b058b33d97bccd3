/** Runs around every test file: what a file made in the scratch root, and any child it left running, goes with it. */
import { afterAll } from 'vitest';
import { stopStrayChildren } from './cli.js';
import { removeScratchDirs } from './scratch.js';

afterAll(async () => {
  await stopStrayChildren();
  await removeScratchDirs();
});
