/**
 * Whether a process on this machine still exists. Signal 0 checks without sending anything;
 * EPERM means it exists but belongs to someone else. Used to tell a dead run's debris (a lock, a
 * temp file) from a live run's.
 */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
