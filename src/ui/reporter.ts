import type { Writable } from 'node:stream';

/** Who is watching stderr decides how much prospect says there. */
export interface ReporterOptions {
  stderr: Writable;
  stderrIsTTY: boolean;
  verbose: boolean;
  quiet: boolean;
  debug: boolean;
}

/**
 * stderr is for people: errors always; summaries and warnings only for a terminal or with
 * --verbose (cron mail and `| head` stay clean); debug lines only with --debug.
 */
export class Reporter {
  readonly chatty: boolean;

  constructor(private readonly options: ReporterOptions) {
    this.chatty = !options.quiet && (options.stderrIsTTY || options.verbose || options.debug);
  }

  get showsProgress(): boolean {
    return this.options.stderrIsTTY && !this.options.quiet && !this.options.debug;
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
    if (!this.options.quiet) this.write(`warning: ${line}`);
  }

  debugLine(line: string): void {
    if (this.options.debug) this.write(`debug: ${line}`);
  }

  error(message: string, hint?: string): void {
    this.notice(message);
    if (hint) this.write(hint);
  }

  /** What a run must say even to cron (not only to a terminal), in the error's voice: `prospect: …`. */
  notice(message: string): void {
    this.write(`prospect: ${message}`);
  }

  private write(line: string): void {
    this.options.stderr.write(`${line}\n`);
  }
}
