/**
 * Where this package is installed, and its version: the one place that knows. Node finds our own
 * package.json by the package's name (a self-reference, allowed by "exports"), so the answer is the
 * same from src/ under vitest, from dist/ and from the bundle's chunks, whatever their depth.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const MANIFEST = 'prospect-cli/package.json';

/** A file shipped with the package, e.g. `packageFile('fixtures', 'technologies.csv')`. */
export function packageFile(...segments: string[]): string {
  return join(dirname(createRequire(import.meta.url).resolve(MANIFEST)), ...segments);
}

/** Written in by the bundle (scripts/bundle.mjs), which so spares every start reading package.json. */
declare const PROSPECT_BUNDLED_VERSION: string | undefined;

let version: string | undefined;

/** The version in package.json ("unknown" if it cannot be read: it is shown, never relied on). */
export function packageVersion(): string {
  version ??= typeof PROSPECT_BUNDLED_VERSION === 'string' ? PROSPECT_BUNDLED_VERSION : readVersion();
  return version;
}

function readVersion(): string {
  try {
    const manifest = JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version?: unknown };
    return typeof manifest.version === 'string' ? manifest.version : 'unknown';
  } catch {
    return 'unknown';
  }
}
