#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm run build`, run by `prepare`).
import module from 'node:module';

// Compile cache makes every later start faster; it exists from Node 22.1 and is optional here.
module.enableCompileCache?.();

const { main } = await import('../dist/src/cli.js');
process.exitCode = await main(process.argv);
