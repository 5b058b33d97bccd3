#!/usr/bin/env node
/**
 * Bundles the CLI for a fast start (`npm run build` runs it after tsc; bin/prospect.js loads the
 * result): the entry dist/cli/cli.js holds what every start needs, and each command's heavy modules
 * (the API client, undici, zod, the writers, the sandbox) stay behind their dynamic imports as
 * chunks beside it, loaded only by the command that runs. zod's message locales, which prospect
 * never reads, are left out. The library API is not bundled: it stays the tsc output in dist/.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
        ? { path: 'zod-locales', namespace: 'prospect-empty' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'prospect-empty' }, () => ({ contents: 'export {};', loader: 'js' }));
  },
};

const target = join(root, 'dist', 'cli');
// Built beside the target, then moved in: chunks first (their names are content hashes, so an
// unchanged chunk keeps its name), the entry last, by one rename. A CLI started during a build runs
// either the old entry or the new one, and chunks the old entry may still load are kept for a while.
const outdir = join(root, 'dist', `.cli-${process.pid}`);

const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
/** The diff thread's entry as src/core/changes/open.ts finds it: from a chunk, one directory up. */
const DIFF_THREAD = '../diff-worker.js';
const options = {
  absWorkingDir: root,
  // The diff of a --state directory runs on a thread of its own, from an entry beside cli.js.
  entryPoints: { cli: 'src/cli.ts', 'diff-worker': 'src/core/changes/diff-worker.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Dependencies are bundled too (no package resolution at start); CommonJS ones (commander,
  // cli-table3) call require() for Node built-ins, which an ES module has to be given.
  banner: {
    js: "import { createRequire as __prospectCreateRequire } from 'node:module';\nconst require = __prospectCreateRequire(import.meta.url);",
  },
  chunkNames: 'chunks/[name]-[hash]',
  plugins: [zodWithoutLocales],
  // exceljs (only `-o FILE.xlsx` loads it) stays in node_modules: Node warns about the deprecated
  // `new Buffer()` its zip library calls only when that call comes from outside node_modules.
  // better-sqlite3 (only `pipeline --state` loads it) stays there too: it finds its native
  // module (build/Release/better_sqlite3.node) from its own directory.
  external: ['exceljs', 'exceljs/*', 'better-sqlite3', 'pg-native'],
  // The version is written in: src/package.ts reads package.json only where it is not.
  define: { PROSPECT_BUNDLED_VERSION: JSON.stringify(version), PROSPECT_DIFF_THREAD: JSON.stringify(DIFF_THREAD) },
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
};

rmSync(outdir, { recursive: true, force: true });
let metafile;
try {
  ({ metafile } = await build(options));
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
// Which modules each output file holds (src/ files and packages, by path): the start-up test
// (test/cli.startup.cli.test.ts) maps the files a start loads back to the modules in them.
const modulesOf = Object.fromEntries(
  Object.entries(metafile.outputs)
    .filter(([output]) => output.endsWith('.js'))
    .map(([output, { inputs }]) => [output.slice(outdir.length - root.length), Object.keys(inputs).sort()]),
);
writeFileSync(join(target, 'modules.json'), `${JSON.stringify(modulesOf, null, 1)}\n`);
const opener = Object.keys(modulesOf).find((output) => modulesOf[output].includes('src/core/changes/open.ts'));
if (!opener?.startsWith('chunks/'))
  throw new Error(`src/core/changes/open.ts is in ${opener}, not a chunk: ${DIFF_THREAD} is wrong`);
renameSync(join(outdir, 'diff-worker.js'), join(target, 'diff-worker.js'));
renameSync(join(outdir, 'cli.js'), join(target, 'cli.js'));
rmSync(outdir, { recursive: true, force: true });
for (const name of readdirSync(join(target, 'chunks'))) {
  const path = join(target, 'chunks', name);
  if (!fresh.has(name) && Date.now() - statSync(path).mtimeMs > STALE_CHUNK_MS) rmSync(path, { force: true });
}
