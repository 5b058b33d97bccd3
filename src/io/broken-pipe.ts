/**
 * `| head -3` closes stdout while a job still writes it. The job ends itself, exit 0, with its
 * --summary (src/core/shared/runner.ts); only when no job is writing does the process just exit 0
 * (src/runtime/context.ts). A start-up module (README "Start-up").
 */
let jobsWriting = 0;

/** A job is under way and will end itself on a broken pipe; resolves to the release. */
export function jobHandlesBrokenPipe(): () => void {
  jobsWriting += 1;
  return () => {
    jobsWriting -= 1;
  };
}

export function aJobHandlesBrokenPipe(): boolean {
  return jobsWriting > 0;
}

/** The reader of a pipe went away: not a failure of the run. */
export function isBrokenPipe(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'EPIPE';
}
