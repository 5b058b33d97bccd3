/**
 * The one decision of whether a pid file's holder is gone, and the files themselves: taken by one
 * process at a time, read as absent, held or abandoned. The state lock (test/core/state-store/lock.test.ts),
 * the verification claims (test/core/verification/ledger.test.ts) and the temp-file sweep
 * (test/io/atomic-file.cli.test.ts) are built on it.
 */
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  UNWRITTEN_ABANDONED_MS,
  createPidFile,
  holderIsGone,
  readPidFile,
  removeAbandoned,
  thisProcess,
  type FileSeen,
  type Holder,
} from '../../src/io/pid-file.js';
import { scratchDir } from '../helpers/cli.js';

/** A pid no process has here: above the kernel's largest (pid_max is at most 2^22). */
const DEAD_PID = 2 ** 22 + 17;

const asHolder = (value: unknown): Holder | undefined => {
  const record = value as Partial<Holder> | null;
  return typeof record?.pid === 'number' && typeof record.host === 'string' ? (record as Holder) : undefined;
};

describe('whether a holder is gone', () => {
  it('a live process of this machine is not; one that has exited is', () => {
    expect(holderIsGone(thisProcess())).toBe(false);
    const exited = spawnSync(process.execPath, ['-e', '0']).pid;
    expect(holderIsGone({ pid: exited!, host: hostname() })).toBe(true);
    expect(holderIsGone({ pid: DEAD_PID, host: hostname() })).toBe(true);
  });

  it('one on another machine never is: its process cannot be checked from here', () => {
    expect(holderIsGone({ pid: DEAD_PID, host: 'cron-box-2.example.internal' })).toBe(false);
  });
});

describe('a pid file', () => {
  it('is created once, mode 0600, holding its record; a second create finds it there', async () => {
    const path = join(await scratchDir(), 'held');
    const record = { ...thisProcess(), started_at: 'now' };
    expect(await createPidFile(path, record)).toBe(true);
    expect(await createPidFile(path, { ...thisProcess(), started_at: 'later' })).toBe(false);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(record);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('reads as absent, held by a live holder, abandoned by a gone one', async () => {
    const dir = await scratchDir();
    expect(await readPidFile(join(dir, 'none'), asHolder)).toEqual({ kind: 'absent' });
    await createPidFile(join(dir, 'mine'), thisProcess());
    expect(await readPidFile(join(dir, 'mine'), asHolder)).toMatchObject({ kind: 'held', holder: thisProcess() });
    const dead = { pid: DEAD_PID, host: hostname() };
    await writeFile(join(dir, 'dead'), JSON.stringify(dead));
    expect(await readPidFile(join(dir, 'dead'), asHolder)).toMatchObject({ kind: 'abandoned', holder: dead });
  });

  it('one not yet written is held; one left unwritten longer than the grace is abandoned', async () => {
    const path = join(await scratchDir(), 'unwritten');
    await writeFile(path, '');
    expect(await readPidFile(path, asHolder)).toMatchObject({ kind: 'held', holder: undefined });
    const then = (Date.now() - UNWRITTEN_ABANDONED_MS - 5_000) / 1000;
    await utimes(path, then, then);
    expect(await readPidFile(path, asHolder)).toMatchObject({ kind: 'abandoned', holder: undefined });
  });
});

describe('removing an abandoned pid file', () => {
  it('removes the file that was read, and nothing beside it', async () => {
    const dir = await scratchDir();
    const path = join(dir, 'lock');
    await writeFile(path, JSON.stringify({ pid: DEAD_PID, host: hostname() }));
    const found = await readPidFile(path, asHolder);
    expect(found.kind).toBe('abandoned');
    await removeAbandoned(path, found as { seen: FileSeen });
    expect(await readdir(dir)).toEqual([]);
  });

  it('leaves the file of a process that took it over meanwhile', async () => {
    const dir = await scratchDir();
    const path = join(dir, 'lock');
    await writeFile(path, JSON.stringify({ pid: DEAD_PID, host: hostname() }));
    const found = await readPidFile(path, asHolder);
    // Another process found it abandoned too, removed it and made its own.
    await rm(path);
    expect(await createPidFile(path, thisProcess())).toBe(true);
    await removeAbandoned(path, found as { seen: FileSeen });
    expect(await readdir(dir)).toEqual(['lock']);
    expect(await readPidFile(path, asHolder)).toMatchObject({ kind: 'held', holder: thisProcess() });
  });
});
