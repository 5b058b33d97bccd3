#!/usr/bin/env node
// Thin launcher. `npm run build` (run by `prepare`) compiles src/ with tsc into dist/src/ (the
// library API) and bundles the CLI into dist/cli/ (scripts/bundle.mjs): one entry file plus chunks
// that each command loads on demand, so a start reads a handful of files instead of ~80 modules.
import { existsSync } from 'node:fs';
import module from 'node:module';
import v8 from 'node:v8';

// Compile cache makes every later start faster; it exists from Node 22.1 and is optional here.
module.enableCompileCache?.();
// Each page of an export leaves a few MB behind (its text, its parsed rows and their checked copies)
// once it is written. V8 lets the old generation grow to about twice its live size before it
// collects; growing by 20% instead keeps the peak RSS of a long export near its live size
// (BENCHMARKS.md section 4). A V8 heuristic read at every collection, so it can be set from here.
v8.setFlagsFromString('--heap-growing-percent=20');

const bundled = new URL('../dist/cli/cli.js', import.meta.url);
// Without the bundle (a build by tsc alone), the unbundled CLI: the same code, a slower start.
const { main } = await import(existsSync(bundled) ? bundled.href : '../dist/src/cli.js');
process.exitCode = await main(process.argv);
