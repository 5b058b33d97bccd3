#!/usr/bin/env node
/**
 * Bundles the CLI for a fast start (`npm run build` runs it after tsc; bin/prospect.js loads the
 * result). What every start needs (commander, the command definitions) is one chunk, loaded by the
 * entry dist/cli/cli.js; each command's heavy modules (the API client, undici, zod, the writers, the
 * sandbox) stay behind their dynamic imports as chunks beside it, loaded only by the command that runs.
 * Resolving and reading ~80 separate modules was most of the start-up time, and each file Node's ES
 * module loader opens still costs about 1% of a bare `node -e 0`.
 *
 * undici is imported by its public API (Agent, request), as the library build does. One plugin keeps
 * out of the bundle what the CLI never runs but would load, parse and keep in memory with every
 * data command: zod's message locales.
 *
 * The library API (`import { createClient } from 'prospect-cli'`) is not bundled: it stays the tsc
 * output in dist/ with its .d.ts files.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * zod's `z.locales` (error messages in 50 languages, 370 KB of the chunk every data command loads):
 * prospect never reads it. English, the messages prospect shows, is registered by zod's schemas
 * module itself, not through this index.
 */
const zodWithoutLocales = {
  name: 'zod-without-locales',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer) ? { path: 'zod-locales', namespace: 'prospect-empty' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'prospect-empty' }, () => ({ contents: 'export {};', loader: 'js' }));
  },
};

/**
 * esbuild puts code that the entry and some lazily imported modules share into chunks keyed by which
 * of them use it, even though the entry has always loaded it by the time any of them is imported: the
 * start path came out as 14 files (commander, exit codes, the config keys, ... each its own chunk).
 * Every module a dynamic import loads is made to import the entry's source too, so everything the
 * entry loads is shared by all of them alike and lands in one chunk. Those imports cost nothing at
 * run time (the entry is loaded first) and change no evaluation order (the entry's modules are
 * evaluated before any lazy one). Which modules are imported lazily comes from a first, unwritten
 * build: a module can be loaded statically before its dynamic import is seen, so the set is not known
 * while the real build loads files.
 */
const ENTRY = join(root, 'src', 'cli.ts');
function startPathInOneChunk(lazyModules) {
  return {
    name: 'start-path-in-one-chunk',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) =>
        lazyModules.has(args.path) ? { contents: `${readFileSync(args.path, 'utf8')}\nimport ${JSON.stringify(ENTRY)};\n`, loader: 'ts' } : undefined,
      );
    },
  };
}

/** Our own modules that some module imports with `import()` (packages are left as they are). */
function lazyModulesOf(metafile) {
  const lazy = new Set();
  for (const input of Object.values(metafile.inputs)) {
    for (const imported of input.imports) {
      if (imported.kind === 'dynamic-import' && !imported.external && imported.path.startsWith('src/')) lazy.add(join(root, imported.path));
    }
  }
  return lazy;
}

/**
 * commander loads node:child_process when it loads, for subcommands that are separate executables;
 * prospect has none, and that module pulls in net, dgram and the stream classes: 9 of the 105 million
 * instructions `prospect --version` ran beyond a bare `node -e 0`. It is loaded the first time
 * commander calls spawn.
 */
const commanderSpawnOnDemand = {
  name: 'commander-spawn-on-demand',
  setup(build) {
    build.onResolve({ filter: /^node:child_process$/ }, (args) =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer) ? { path: 'child_process', namespace: 'prospect-commander-spawn' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'prospect-commander-spawn' }, () => ({
      contents: "let loaded;\nmodule.exports = { spawn: (...args) => (loaded ??= require('node:child_process')).spawn(...args) };\n",
      loader: 'js',
    }));
  },
};

const target = join(root, 'dist', 'cli');
// Built beside the target, then moved in: chunks first (their names are content hashes, so an
// unchanged chunk keeps its name), the entry last, by one rename. A CLI started during a build runs
// either the old entry or the new one, and chunks the old entry may still load are kept for a while.
const outdir = join(root, 'dist', `.cli-${process.pid}`);

const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
const options = {
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
  plugins: [zodWithoutLocales, commanderSpawnOnDemand],
  // exceljs (only `-o FILE.xlsx` loads it) stays in node_modules: Node warns about the deprecated
  // `new Buffer()` its zip library calls only when that call comes from outside node_modules.
  // better-sqlite3 (only `pipeline --state` loads it) stays there too: it finds its native
  // module (build/Release/better_sqlite3.node) from its own directory.
  external: ['exceljs', 'exceljs/*', 'better-sqlite3'],
  // undici's cookie helpers (never called here) read `globalThis.Headers` when undici loads, and
  // Node builds that global on first read by loading its own second copy of undici: 50 ms of CPU
  // and 12 MB of RSS for every data command. The helpers then know undici's own Headers only.
  //
  // The version is written in (src/package.ts reads package.json only where it is not): finding
  // package.json through the package's own name made Node's CommonJS resolver run at every start.
  define: { 'globalThis.Headers': 'undefined', PROSPECT_BUNDLED_VERSION: JSON.stringify(version) },
  legalComments: 'none',
  logLevel: 'warning',
};

rmSync(outdir, { recursive: true, force: true });
try {
  const { metafile } = await build({ ...options, write: false, metafile: true });
  await build({ ...options, plugins: [...options.plugins, startPathInOneChunk(lazyModulesOf(metafile))] });
} catch (error) {
  rmSync(outdir, { recursive: true, force: true });
  throw error;
}
const STALE_CHUNK_MS = 10 * 60 * 1000;
mkdirSync(join(target, 'chunks'), { recursive: true });
const fresh = new Set(readdirSync(join(outdir, 'chunks')));
for (const name of fresh) {
  if (!existsSync(join(target, 'chunks', name))) renameSync(join(outdir, 'chunks', name), join(target, 'chunks', name));
}
renameSync(join(outdir, 'cli.js'), join(target, 'cli.js'));
rmSync(outdir, { recursive: true, force: true });
for (const name of readdirSync(join(target, 'chunks'))) {
  const path = join(target, 'chunks', name);
  if (!fresh.has(name) && Date.now() - statSync(path).mtimeMs > STALE_CHUNK_MS) rmSync(path, { force: true });
}
