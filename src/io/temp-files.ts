/**
 * Temp files still open, so a signal handler can remove them: an interrupted run must never leave
 * debris beside the target, and the target itself is only ever replaced by a complete file.
 * A module of its own, without imports, because the CLI installs its signal handlers at every
 * start and must not load node:crypto and node:fs/promises (atomic-file.ts) just for that.
 */
const openTempFiles = new Set<string>();

export function trackTempFile(path: string): void {
  openTempFiles.add(path);
}

export function untrackTempFile(path: string): void {
  openTempFiles.delete(path);
}

export function removeOpenTempFilesSync(remove: (path: string) => void): void {
  for (const path of openTempFiles) {
    try {
      remove(path);
    } catch {
      // Already gone: nothing to clean.
    }
  }
  openTempFiles.clear();
}
