#!/usr/bin/env node
/**
 * Bundles the CLI for a fast start (`npm run build` runs it after tsc; bin/prospect.js loads the
 * result). One entry, dist/cli/cli.js, holds what every start needs (commander, the command
 * definitions); each command's heavy modules (the API client, undici, zod, the writers, the sandbox)
 * stay behind their dynamic imports as chunks beside it, loaded only by the command that runs.
 * Resolving and reading ~80 separate modules was most of the start-up time.
 *
 * The library API (`import { createClient } from 'prospect-cli'`) is not bundled: it stays the tsc
 * output in dist/src/ with its .d.ts files.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist', 'cli');

rmSync(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { cli: 'src/cli.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Dependencies are bundled too (no package resolution at start); CommonJS ones (commander,
  // cli-table3) call require() for Node built-ins, which an ES module has to be given.
  banner: { js: "import { createRequire as __prospectCreateRequire } from 'node:module';\nconst require = __prospectCreateRequire(import.meta.url);" },
  chunkNames: 'chunks/[name]-[hash]',
  legalComments: 'none',
  logLevel: 'warning',
});
