/**
 * The one scratch-directory helper. Every directory lives under the run's scratch root (made by
 * test/helpers/global-setup.ts, removed when the run ends), and is removed when its test file ends
 * (test/helpers/file-setup.ts), so a run leaves nothing in the system temp directory.
 */
import { mkdtempSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The directory every scratch directory of this run goes under. */
    scratchRoot: string;
  }
}

const created: string[] = [];

/** The run's scratch root (the system temp directory when run outside `vitest run`'s global setup). */
export function scratchRoot(): string {
  return inject('scratchRoot') ?? tmpdir();
}

/** A fresh empty directory, removed when the test file ends. */
export async function scratchDir(prefix = 'prospect-test-'): Promise<string> {
  const dir = await mkdtemp(join(scratchRoot(), prefix));
  created.push(dir);
  return dir;
}

/** The same, for synchronous set-up code. */
export function scratchDirSync(prefix = 'prospect-test-'): string {
  const dir = mkdtempSync(join(scratchRoot(), prefix));
  created.push(dir);
  return dir;
}

/** Removes every scratch directory made so far; tests may have left some unreadable. */
export async function removeScratchDirs(): Promise<void> {
  await Promise.all(created.splice(0).map((dir) => removeTree(dir)));
}

export async function removeTree(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true });
  } catch {
    await chmodTree(dir);
    await rm(dir, { recursive: true, force: true });
  }
}

async function chmodTree(dir: string): Promise<void> {
  const { readdir } = await import('node:fs/promises');
  await chmod(dir, 0o700).catch(() => {});
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (entry.isDirectory()) await chmodTree(join(dir, entry.name));
  }
}
