import { appendFile, readFile, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { z } from 'zod';
import { CliError, ExitCode } from '../../exit-codes.js';
import { processIsAlive } from '../../process-alive.js';

export class LockedError extends CliError {
  constructor(message: string, hint: string) {
    super(message, ExitCode.locked, hint);
    this.name = 'LockedError';
  }
}

const lockHolderSchema = z.object({ pid: z.number().int(), host: z.string(), started_at: z.string() });
type LockHolder = z.output<typeof lockHolderSchema>;

/**
 * Takes the lock of a --state directory (the file holds the running process: pid, host, start), or
 * says who holds it. A lock left by a dead process is taken over. Resolves to the release.
 */
export async function takeStateLock(lockPath: string, stateDir: string, command: string): Promise<() => Promise<void>> {
  const mine: LockHolder & { command: string } = {
    pid: process.pid,
    host: hostname(),
    started_at: new Date().toISOString(),
    command,
  };
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      await appendFile(lockPath, JSON.stringify(mine), { flag: 'wx', mode: 0o600 });
      return async () => {
        await rm(lockPath, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await readLock(lockPath);
    if (holder.host !== hostname()) {
      throw new LockedError(
        `another pipeline run on ${holder.host} (pid ${holder.pid}, started ${holder.started_at}) ` +
          `holds --state ${stateDir}.`,
        `Its process cannot be checked from here: when it has stopped, remove ${lockPath} and run again.`,
      );
    }
    if (processIsAlive(holder.pid)) {
      throw new LockedError(
        `another pipeline run (pid ${holder.pid}, started ${holder.started_at}) is using --state ${stateDir}.`,
        'Wait for it to finish, or stop it; prospect exits rather than run twice on one state.',
      );
    }
    await rm(lockPath, { force: true });
  }
  throw new LockedError(
    `could not take the lock of --state ${stateDir}.`,
    'Another run may have taken it at the same moment; try again.',
  );
}

async function readLock(path: string): Promise<LockHolder> {
  const text = await readFile(path, 'utf8').catch(() => '');
  const parsed = (() => {
    try {
      return lockHolderSchema.safeParse(JSON.parse(text));
    } catch {
      return undefined;
    }
  })();
  // A lock being written right now reads as empty (or half): treat it as held, by a live process.
  return parsed?.success ? parsed.data : { pid: process.pid === 1 ? 2 : 1, host: hostname(), started_at: 'just now' };
}
