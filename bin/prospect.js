#!/usr/bin/env node
// Thin launcher. `npm run build` (run by `prepare`) compiles src/ with tsc into dist/src/ (the
// library API) and bundles the CLI into dist/cli/ (scripts/bundle.mjs): one entry file plus chunks
// that each command loads on demand, so a start reads a handful of files instead of ~80 modules.
import module from 'node:module';

// Compile cache makes every later start faster; it exists from Node 22.1 and is optional here.
module.enableCompileCache?.();

let cli;
try {
  cli = await import('../dist/cli/cli.js');
} catch (error) {
  // A build by tsc alone (no bundle step yet): run the unbundled CLI, same code, slower start.
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('dist/cli/cli.js')) throw error;
  cli = await import('../dist/src/cli.js');
}
process.exitCode = await cli.main(process.argv);
