#!/usr/bin/env node
// Thin launcher. `npm run build` (run by `prepare`) compiles src/ with tsc into dist/src/ (the
// library API) and bundles the CLI into dist/cli/ (scripts/bundle.mjs): one entry file plus chunks
// that each command loads on demand, so a start reads a handful of files instead of ~80 modules.
import { existsSync } from 'node:fs';
import module from 'node:module';

// Compile cache makes every later start faster; it exists from Node 22.1 and is optional here.
module.enableCompileCache?.();

const bundled = new URL('../dist/cli/cli.js', import.meta.url);
// Without the bundle (a build by tsc alone), the unbundled CLI: the same code, a slower start.
const { main } = await import(existsSync(bundled) ? bundled.href : '../dist/src/cli.js');
process.exitCode = await main(process.argv);
