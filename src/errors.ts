/** The errors prospect raises for the person running it: a message, an exit code, a hint. */
import { ExitCode, type ExitCodeValue } from './exit-code-table.js';

/** An error whose message is written for the person running the command. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCodeValue,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, ExitCode.usage, hint);
    this.name = 'UsageError';
  }
}

/**
 * A run that found nothing to write (exit 3, as filters that match nobody): a cron job must tell
 * "nothing matched" from an empty success. --allow-empty writes the empty result and exits 0.
 */
export class EmptyResultError extends CliError {
  constructor(message: string) {
    super(
      message,
      ExitCode.unanswerable,
      'Nothing was written. Check the filters or the input; --allow-empty writes an empty result and exits 0.',
    );
    this.name = 'EmptyResultError';
  }
}

/** The person at the terminal pressed Ctrl-C at a question, before anything was paid for: exit 130, as for Ctrl-C. */
export class CancelledError extends CliError {
  constructor(message = 'cancelled; nothing was spent.') {
    super(message, ExitCode.interrupted);
    this.name = 'CancelledError';
  }
}

/**
 * The person at the terminal answered "no" to the spend question: a decision, not an interrupt, and
 * not a success either (the output was not written, so `&& upload` must not run): exit 2.
 */
export class DeclinedError extends CliError {
  constructor() {
    super('not spent: the question was answered no; nothing was paid for or written.', ExitCode.usage);
    this.name = 'DeclinedError';
  }
}
