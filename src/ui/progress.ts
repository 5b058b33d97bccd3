import type { Reporter } from './reporter.js';
import { terminalSize } from './terminal-size.js';
import type { ProgressState } from './progress-line.js';
import { displaySafeLine } from '../util/display-safe.js';

/** What a job calls while it works; the runner stops it (success, error or Ctrl-C) before anything else is said. */
export interface Progress {
  update(state: ProgressState): void;
  stop(): void;
  /** Clears the spinner while `during` runs (a question on the terminal), then shows it again. */
  suspend<T>(during: () => Promise<T>): Promise<T>;
}

const SILENT: Progress = { update() {}, stop() {}, suspend: (during) => during() };

/** Redrawing on every page of a fast export costs more than the page; a few times a second is plenty. */
const REDRAW_EVERY_MS = 100;

/**
 * The progress line on stderr, only when a person is watching a terminal that can redraw a line
 * (not TERM=dumb); nothing in pipes, cron or under -q. ora draws it: it clears the line before
 * anything else is written to stdout or stderr (a table's rows, a warning) and draws it again
 * below, so the line never covers data.
 */
export async function startProgress(
  reporter: Reporter,
  stderr: NodeJS.WriteStream,
  label: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Progress> {
  if (!reporter.showsProgress || env.TERM === 'dumb') return SILENT;
  // Loaded only here, on a terminal: a pipe or cron never pays for ora or for measuring text.
  const [{ default: ora }, { progressLine }] = await Promise.all([import('ora'), import('./progress-line.js')]);
  const screen = new SaneSizeStream(stderr);
  const spinner = ora({
    text: displaySafeLine(label),
    stream: screen as unknown as NodeJS.WritableStream,
    // Decided above, so that CI=true (which ora reads as "no terminal") does not hide it from a person.
    isEnabled: true,
    color: env.NO_COLOR ? false : 'cyan',
    discardStdin: false,
  }).start();
  const startedAt = Date.now();
  let lastDrawn = 0;
  // A second Ctrl-C exits at once, without the runner's cleanup: the line must not outlive the process.
  const eraseOnExit = () => spinner.stop();
  process.once('exit', eraseOnExit);
  return {
    update(state) {
      const now = Date.now();
      if (now - lastDrawn < REDRAW_EVERY_MS) return;
      lastDrawn = now;
      // ora puts its frame and a space before the text; the rest of the line is ours.
      spinner.text = displaySafeLine(progressLine(label, state, now - startedAt, screen.columns - 2));
    },
    stop() {
      process.off('exit', eraseOnExit);
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

/**
 * stderr as ora sees it: the same terminal, with a believable size. ora counts the lines it must
 * clear by dividing by the width, and a terminal that reports 0 columns made that count endless.
 */
class SaneSizeStream {
  readonly isTTY = true;

  constructor(private readonly target: NodeJS.WriteStream) {}

  get columns(): number {
    return terminalSize(this.target).columns;
  }

  get rows(): number {
    return terminalSize(this.target).rows;
  }

  write(
    chunk: string | Uint8Array,
    encoding?: BufferEncoding | ((error?: Error | null) => void),
    callback?: (error?: Error | null) => void,
  ): boolean {
    return typeof encoding === 'function'
      ? this.target.write(chunk, encoding)
      : this.target.write(chunk, encoding as BufferEncoding, callback);
  }

  cursorTo(x: number, y?: number): boolean {
    return this.target.cursorTo(x, y);
  }

  moveCursor(dx: number, dy: number): boolean {
    return this.target.moveCursor(dx, dy);
  }

  clearLine(direction: -1 | 0 | 1): boolean {
    return this.target.clearLine(direction);
  }

  once(event: string, listener: (...args: unknown[]) => void): this {
    this.target.once(event, listener);
    return this;
  }

  removeListener(event: string, listener: (...args: unknown[]) => void): this {
    this.target.removeListener(event, listener);
    return this;
  }
}
