#!/usr/bin/env node
/**
 * Builds packages/client (`npm run build` runs it after tsc): the library entry src/index.ts as one
 * ES module, with undici and zod left as its only imports, and the declarations tsc wrote in dist/
 * that the entry reaches. The package so installs without any of the CLI's dependencies.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'packages', 'client', 'dist');
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;

rmSync(target, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: ['src/index.ts'],
  outfile: join(target, 'index.js'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Every package stays an import, so one that is not a dependency of the client fails the install test.
  packages: 'external',
  define: { PROSPECT_BUNDLED_VERSION: JSON.stringify(version) },
  legalComments: 'none',
  logLevel: 'warning',
});

/** dist/index.d.ts and every declaration it reaches through relative imports, copied beside the bundle. */
const seen = new Set();
const pending = [join(root, 'dist', 'index.d.ts')];
while (pending.length > 0) {
  const file = pending.pop();
  if (seen.has(file)) continue;
  seen.add(file);
  if (!existsSync(file)) throw new Error(`${relative(root, file)} is missing: run tsc first (npm run build)`);
  const out = join(target, relative(join(root, 'dist'), file));
  mkdirSync(dirname(out), { recursive: true });
  copyFileSync(file, out);
  for (const [, spec] of readFileSync(file, 'utf8').matchAll(/(?:from |import\()['"](\.{1,2}\/[^'"]+)['"]/g))
    pending.push(resolve(dirname(file), spec.replace(/\.js$/, '.d.ts')));
}
