import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The installed package's root. Code runs both from source (vitest) and from dist/, at different
 * depths, so the root is found by walking up to our own package.json rather than by a fixed "../..".
 */
export function packageRoot(from: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'fixtures'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('prospect: cannot find the package root (package.json beside fixtures/)');
    dir = parent;
  }
}
