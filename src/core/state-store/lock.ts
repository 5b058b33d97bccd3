import { rm } from 'node:fs/promises';
import { z } from 'zod';
import { CliError, ExitCode } from '../../exit-codes.js';
import { createPidFile, readPidFile, removeAbandoned, thisProcess } from '../../io/pid-file.js';

export class LockedError extends CliError {
  constructor(message: string, hint: string) {
    super(message, ExitCode.locked, hint);
    this.name = 'LockedError';
  }
}

const lockHolderSchema = z.object({ pid: z.number().int(), host: z.string(), started_at: z.string() });
type LockHolder = z.output<typeof lockHolderSchema>;

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
    const found = await readPidFile(lockPath, (value) => lockHolderSchema.safeParse(value).data);
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
