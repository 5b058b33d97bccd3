import { existsSync } from 'node:fs';
import { readFile, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LockedError, takeStateLock } from '../../../src/core/state-store/lock.js';
import { UNWRITTEN_ABANDONED_MS } from '../../../src/io/pid-file.js';
import { scratchDir } from '../../helpers/cli.js';

/** A pid no process has here: above the kernel's largest (pid_max is at most 2^22). */
const DEAD_PID = 2 ** 22 + 17;

async function lockFile(holder: { pid: number; host: string }): Promise<string> {
  const path = join(await scratchDir(), 'lock');
  await writeFile(path, JSON.stringify({ ...holder, started_at: '2026-01-05T03:00:00.000Z', command: 'pipeline' }));
  return path;
}

describe('the lock of a --state directory', () => {
  it('is taken when no run holds it, and released', async () => {
    const path = join(await scratchDir(), 'lock');
    const release = await takeStateLock(path, 'state', 'pipeline');
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    await release();
    expect(existsSync(path)).toBe(false);
  });

  it('is taken over from a process of this host that is gone', async () => {
    const path = await lockFile({ pid: DEAD_PID, host: hostname() });
    const release = await takeStateLock(path, 'state', 'pipeline');
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ pid: process.pid });
    await release();
  });

  it('is never taken over from another host, whose processes cannot be checked from here', async () => {
    // The same pid that is taken over above, when it is this host's.
    const path = await lockFile({ pid: DEAD_PID, host: 'cron-box-2.example.internal' });
    const taking = takeStateLock(path, 'state', 'pipeline');
    await expect(taking).rejects.toBeInstanceOf(LockedError);
    await expect(taking).rejects.toThrow(/cron-box-2\.example\.internal/);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({
      pid: DEAD_PID,
      host: 'cron-box-2.example.internal',
    });
  });
});

describe('a lock that was never written (its process died between creating and writing it)', () => {
  it('is held while it may still be being written, and taken over after the grace', async () => {
    const path = join(await scratchDir(), 'lock');
    await writeFile(path, '');
    await expect(takeStateLock(path, 'state', 'pipeline')).rejects.toThrow(
      'another pipeline run is starting on --state state.',
    );
    const then = (Date.now() - UNWRITTEN_ABANDONED_MS - 5_000) / 1000;
    await utimes(path, then, then);
    const release = await takeStateLock(path, 'state', 'pipeline');
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    await release();
  });
});

describe('two runs that find the same dead lock at once', () => {
  it('exactly one takes it over; the other is sent away', async () => {
    for (let round = 0; round < 20; round += 1) {
      const path = await lockFile({ pid: DEAD_PID, host: hostname() });
      const takes = await Promise.allSettled([
        takeStateLock(path, 'state', 'pipeline'),
        takeStateLock(path, 'state', 'pipeline'),
      ]);
      expect(takes.map((take) => take.status).sort()).toEqual(['fulfilled', 'rejected']);
      const lost = takes.find((take) => take.status === 'rejected')!;
      expect(lost.reason).toBeInstanceOf(LockedError);
    }
  });
});
