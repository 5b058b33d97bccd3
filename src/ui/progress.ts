import type { Reporter } from './reporter.js';

export interface Progress {
  update(text: string): void;
  stop(): void;
}

const SILENT: Progress = { update() {}, stop() {} };

/** A spinner on stderr, only when a person is watching a terminal; nothing in pipes or cron. */
export async function startProgress(reporter: Reporter, stderr: NodeJS.WriteStream, text: string): Promise<Progress> {
  if (!reporter.showsProgress) return SILENT;
  const { default: ora } = await import('ora');
  const spinner = ora({ text, stream: stderr, color: process.env.NO_COLOR ? undefined : 'cyan', discardStdin: false }).start();
  let last = 0;
  return {
    update(next) {
      // Redrawing on every page of a fast export costs more than the page; 10 times a second is plenty.
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      spinner.text = next;
    },
    stop() {
      spinner.stop();
    },
  };
}

/** "12,400 rows · 3,100 rows/s" */
export function rateText(count: number, noun: string, startedAt: number): string {
  const seconds = Math.max((Date.now() - startedAt) / 1000, 0.001);
  return `${formatCount(count)} ${noun} · ${formatCount(Math.round(count / seconds))} ${noun}/s`;
}

/**
 * 12400 → "12,400": what `toLocaleString('en-US')` writes for a whole number, without it. The
 * first toLocaleString maps ICU's locale data into memory (about 5 MB of the process), and these
 * counts are formatted on every page of an export.
 */
export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString('en-US');
  const digits = String(Math.abs(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return n < 0 ? `-${digits}` : digits;
}
