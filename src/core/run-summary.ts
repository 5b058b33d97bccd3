import { writeFileAtomic } from '../io/atomic-file.js';

/**
 * The machine-readable record of a run (`--summary FILE`): cron users read it instead of parsing
 * logs. Written on success and on failure, so a failed run still says how far it got.
 */
export interface RunSummaryBase {
  command: string;
  parameters: Record<string, unknown>;
  started_at: string;
  finished_at?: string;
  duration_ms?: number;
  exit_code?: number;
  error?: string;
}

export async function writeSummary(path: string | undefined, summary: RunSummaryBase & Record<string, unknown>): Promise<void> {
  if (path === undefined) return;
  await writeFileAtomic(path, `${JSON.stringify(summary, null, 2)}\n`);
}

export function finishSummary<T extends RunSummaryBase>(summary: T, startedAt: number, exitCode: number, error?: unknown): T {
  summary.finished_at = new Date().toISOString();
  summary.duration_ms = Date.now() - startedAt;
  summary.exit_code = exitCode;
  if (error !== undefined) summary.error = error instanceof Error ? error.message : String(error);
  return summary;
}
