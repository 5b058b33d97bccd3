/**
 * The helpers name what they make uniquely even when loaded afresh: the suite's files share a worker
 * (isolate: false), and a file that calls vi.resetModules() makes the files after it load the helpers
 * again. A count kept in a helper restarted there, and CI failed on a role made twice.
 */
import { describe, expect, it, vi } from 'vitest';
import { POSTGRES } from './postgres.js';

/** The helper module `path`, loaded as a fresh copy (as a file after a vi.resetModules() gets it). */
async function fresh<T>(path: string): Promise<T> {
  vi.resetModules();
  return (await import(path)) as T;
}

describe('helpers loaded afresh', () => {
  it('give each spawned run a config directory of its own', async () => {
    const dirs: string[] = [];
    for (let load = 0; load < 2; load++) {
      const { runShell } = await fresh<typeof import('./cli.js')>('./cli.js');
      dirs.push((await runShell('printf %s "$PROSPECT_CONFIG_DIR"')).stdout);
    }
    expect(dirs[0]).toMatch(/\/config$/);
    expect(dirs[1]).not.toBe(dirs[0]);
  });

  it.skipIf(POSTGRES.skip)('make a database and role of the same prefix twice', async () => {
    const names: string[] = [];
    for (let load = 0; load < 2; load++) {
      const { testDatabase } = await fresh<typeof import('./postgres.js')>('./postgres.js');
      names.push((await testDatabase('reload')).role);
    }
    expect(names[1]).not.toBe(names[0]);
  });
});
