import type { Writable } from 'node:stream';
import { afterPendingWrites } from '../util/streams.js';
import { displaySafe } from '../util/display-safe.js';
import { terminalSize } from './terminal-size.js';
import { wrapWords } from './wrap.js';

/** Who is watching stderr decides how much prospect says there. */
export interface ReporterOptions {
  stderr: Writable;
  /** The data stream: a line for people waits until what it holds has gone out (`2>&1` must not cut a record). */
  stdout?: Writable;
  stderrIsTTY: boolean;
  verbose: boolean;
  quiet: boolean;
  debug: boolean;
}

/**
 * stderr is for people. The rule (README, "Where output goes"):
 * - errors, always;
 * - progress, only on a terminal;
 * - a caveat (a warning that changes what the output means: skipped inputs, cut domains, unchecked
 *   addresses, a stopped --max), one line per kind with its count, everywhere: terminal, pipe, cron;
 * - summaries and details (info, warn, details), on a terminal or with --verbose;
 * - -q silences everything but errors; debug lines only with --debug.
 */
export class Reporter {
  readonly chatty: boolean;
  private readonly caveats = new Set<string>();

  constructor(private readonly options: ReporterOptions) {
    this.chatty = !options.quiet && (options.stderrIsTTY || options.verbose || options.debug);
  }

  get showsProgress(): boolean {
    return this.options.stderrIsTTY && !this.options.quiet && !this.options.debug;
  }

  /** --verbose: the details a terminal is spared (the dataset's notes in full). */
  get verbose(): boolean {
    return this.options.verbose;
  }

  get debugging(): boolean {
    return this.options.debug;
  }

  info(line: string): void {
    if (this.chatty) this.write(line);
  }

  warn(line: string): void {
    if (this.chatty) this.write(`warning: ${line}`);
  }

  /**
   * A warning that changes what the output means (skipped inputs, cut domains, unchecked
   * addresses, a stopped --max): one line per kind, with its count, on stderr everywhere but
   * under -q. Cron mail is where a user needs it; the details behind it go to warn/--verbose.
   */
  caveat(line: string): void {
    // One line per kind: a job that reaches the same caveat twice (a retried step) says it once.
    if (this.options.quiet || this.caveats.has(line)) return;
    this.caveats.add(line);
    this.write(`warning: ${line}`);
  }

  /** The items behind a caveat (which lines were skipped, which domains were cut), indented under it. */
  details(lines: readonly string[]): void {
    if (this.chatty) for (const line of lines) this.write(`  ${line}`);
  }

  /** A line that is progress (a request still waiting): only where progress is shown, a terminal. */
  progressNote(line: string): void {
    if (this.showsProgress) this.write(line);
  }

  debugLine(line: string): void {
    if (this.options.debug) this.write(`debug: ${line}`);
  }

  error(message: string, hint?: string): void {
    this.notice(message);
    if (hint) this.write(hint);
  }

  /**
   * The last word of a failed run, in the error's voice (`prospect: …`), such as where its
   * checkpoint is; like the error it follows, even under -q. A success says nothing through here:
   * what cron must hear about a success is a caveat.
   */
  notice(message: string): void {
    this.write(`prospect: ${message}`);
  }

  /**
   * Every line, whoever wrote it: what a service said may be in it, and it is shown as plain text;
   * on a terminal it is wrapped at spaces to the terminal's width.
   */
  private write(raw: string): void {
    const { stdout, stderr } = this.options;
    const line = this.options.stderrIsTTY
      ? wrapWords(displaySafe(raw), terminalSize(stderr as { columns?: number }).columns)
      : displaySafe(raw);
    // With `2>&1` both streams reach one pipe: a line written while stdout still holds part of a
    // record would land inside it. It waits for stdout to drain (or to close), in its turn.
    if (stdout !== undefined && (this.waiting.length > 0 || stdout.writableLength > 0)) {
      const write = () => stderr.write(this.waiting.splice(0).join(''));
      if (this.waiting.push(`${line}\n`) === 1) void afterPendingWrites(stdout).then(write, write);
      return;
    }
    stderr.write(`${line}\n`);
  }

  private readonly waiting: string[] = [];
}
