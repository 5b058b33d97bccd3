import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CliError, ExitCode } from '../../exit-codes.js';
import { createPidFile, readPidFile, removeAbandoned, thisProcess } from '../../io/pid-file.js';

export class LockedError extends CliError {
  constructor(message: string, hint: string) {
    super(message, ExitCode.locked, hint);
    this.name = 'LockedError';
  }
}

interface LockHolder {
  pid: number;
  host: string;
  started_at: string;
}

/**
 * The lock file's record, or undefined for anything else. Checked by hand, not with zod: a second
 * run of a held job loads this module before any other, to exit 6 within a second (issue 43).
 */
function lockHolderOf(value: unknown): LockHolder | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { pid, host, started_at: startedAt } = value as Record<string, unknown>;
  const valid = Number.isInteger(pid) && typeof host === 'string' && typeof startedAt === 'string';
  return valid ? { pid: pid as number, host, started_at: startedAt } : undefined;
}

/**
 * A run of a job whose --state DIR another live run holds stops here, with the holder, before the
 * job's modules load: the refusal then takes what `--version` takes. The lock itself is still taken
 * by takeStateLock, once the run has checked its flags.
 */
export async function refuseIfHeld(stateDir: string): Promise<void> {
  const lockPath = join(stateDir, 'lock');
  const found = await readPidFile(lockPath, lockHolderOf).catch(() => undefined);
  if (found?.kind === 'held') throw heldBy(found.holder, lockPath, stateDir);
}

/** Who holds the lock of a --state directory (`prospect state`): undefined when nobody live does. */
export async function stateLockHolder(stateDir: string): Promise<{ pid: number; host: string } | undefined> {
  const found = await readPidFile(join(stateDir, 'lock'), lockHolderOf);
  if (found.kind !== 'held') return undefined;
  return found.holder ?? { pid: 0, host: 'a run just starting' };
}

/**
 * Takes the lock of a --state directory (a pid file holding the running process: pid, host, start),
 * or says who holds it. A lock its holder abandoned (io/pid-file.ts decides) is taken over.
 * Resolves to the release.
 */
export async function takeStateLock(lockPath: string, stateDir: string, command: string): Promise<() => Promise<void>> {
  const mine = { ...thisProcess(), started_at: new Date().toISOString(), command };
  for (let attempt = 0; attempt < 2; attempt += 1) {
    if (await createPidFile(lockPath, mine)) {
      return async () => {
        await rm(lockPath, { force: true });
      };
    }
    const found = await readPidFile(lockPath, lockHolderOf);
    if (found.kind === 'held') throw heldBy(found.holder, lockPath, stateDir);
    if (found.kind === 'abandoned') await removeAbandoned(lockPath, found);
  }
  throw new LockedError(
    `could not take the lock of --state ${stateDir}.`,
    'Another run may have taken it at the same moment; try again.',
  );
}

/** Who holds the lock, as the person who cannot take it needs to hear it. */
function heldBy(holder: LockHolder | undefined, lockPath: string, stateDir: string): LockedError {
  const wait = 'Wait for it to finish, or stop it; prospect exits rather than run twice on one state.';
  if (holder === undefined) return new LockedError(`another pipeline run is starting on --state ${stateDir}.`, wait);
  if (holder.host !== thisProcess().host) {
    return new LockedError(
      `another pipeline run on ${holder.host} (pid ${holder.pid}, started ${holder.started_at}) ` +
        `holds --state ${stateDir}.`,
      `Its process cannot be checked from here: when it has stopped, remove ${lockPath} and run again.`,
    );
  }
  return new LockedError(
    `another pipeline run (pid ${holder.pid}, started ${holder.started_at}) is using --state ${stateDir}.`,
    wait,
  );
}
