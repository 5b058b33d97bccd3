import { formatCount } from './format-count.js';
import type { Reporter } from './reporter.js';

export interface Progress {
  update(text: string): void;
  stop(): void;
  /** Clears the spinner while `during` runs (a question on the terminal), then shows it again. */
  suspend<T>(during: () => Promise<T>): Promise<T>;
}

const SILENT: Progress = { update() {}, stop() {}, suspend: (during) => during() };

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
    async suspend(during) {
      spinner.stop();
      try {
        return await during();
      } finally {
        spinner.start();
      }
    },
  };
}

/** "12,400 rows · 3,100 rows/s" */
export function rateText(count: number, noun: string, startedAt: number): string {
  const seconds = Math.max((Date.now() - startedAt) / 1000, 0.001);
  return `${formatCount(count)} ${noun} · ${formatCount(Math.round(count / seconds))} ${noun}/s`;
}
