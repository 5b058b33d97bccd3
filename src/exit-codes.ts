import {
  AbortedError,
  AuthError,
  BadRequestError,
  ClientOptionError,
  RequestError,
  UnanswerableError,
} from './api/errors.js';

/**
 * The documented exit codes, one place for all of them. README "Exit codes" and
 * `prospect help exit-codes` are generated from EXIT_CODE_DOCS, so the text cannot drift.
 */
export const ExitCode = {
  ok: 0,
  internal: 1,
  usage: 2,
  unanswerable: 3,
  auth: 4,
  service: 5,
  locked: 6,
  output: 7,
  interrupted: 130,
  terminated: 143,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export const EXIT_CODE_DOCS: ReadonlyArray<{ code: ExitCodeValue; meaning: string; short: string }> = [
  {
    code: ExitCode.ok,
    short: 'done',
    meaning: 'Success (also: a verify budget that ran out; the summary counts what is unchecked).',
  },
  {
    code: ExitCode.internal,
    short: 'a bug, or a broken install',
    meaning:
      'Internal error: a bug in prospect (rerun with --debug and report it), or a broken install (a native ' +
      'module that does not load; the message says how to repair it).',
  },
  {
    code: ExitCode.usage,
    short: 'a usage or input mistake',
    meaning:
      'Usage or input error, found before any request (bad flag, bad value, invalid input, an unknown ' +
      'technology, country or range, no API key set), or "no" to the spend question; nothing was paid for.',
  },
  {
    code: ExitCode.unanswerable,
    short: 'nothing matched (an empty result)',
    meaning:
      'Nothing matched: the filters are valid but match nobody (422 no_match), or the result is empty (no ' +
      'contact for the domains, no lead); --allow-empty writes an empty result and exits 0 instead.',
  },
  {
    code: ExitCode.auth,
    short: 'the key or plan',
    meaning: 'Authentication or plan: the service refused the key (401), or the plan lacks the endpoint (403).',
  },
  {
    code: ExitCode.service,
    short: 'the service or the network after retries',
    meaning: 'The service or the network failed after retries, or answered something malformed.',
  },
  { code: ExitCode.locked, short: 'locked', meaning: 'Another pipeline run holds the same --state directory.' },
  {
    code: ExitCode.output,
    short: 'the output could not be written',
    meaning:
      'The output could not be written (a missing directory, no permission, disk full, ...); the old file is ' +
      'untouched.',
  },
  {
    code: ExitCode.interrupted,
    short: 'interrupted (SIGINT)',
    meaning: 'Interrupted (SIGINT, Ctrl-C). A pipeline with --state resumes when run again.',
  },
  {
    code: ExitCode.terminated,
    short: 'terminated (SIGTERM)',
    meaning: 'Terminated (SIGTERM). A pipeline with --state resumes when run again.',
  },
];

/** Every code in a line, for a paragraph that names them all ("0 done, 1 a bug, ..."): EXIT_CODE_DOCS' short texts. */
export function exitCodesInOneLine(): string {
  return EXIT_CODE_DOCS.map(({ code, short }) => `${code} ${short}`).join(', ');
}

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

/** File-system failures that are about the machine, not about prospect: full disk, permissions, a read-only mount. */
const OUTPUT_FAILURES: Record<string, string> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is exceeded',
  EFBIG: 'the file is larger than this system allows',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only',
  EISDIR: 'it is a directory',
  ENOTEMPTY: 'a directory is in the way',
  EEXIST: 'something else is in the way',
  EIO: 'an input/output error',
  EMFILE: 'too many open files',
  ENXIO: 'nothing can be written to it (a socket, or a FIFO with no reader)',
};

/** Turns a failed write or rename into the message and exit code a person (or cron) can act on. */
export function outputFailure(error: unknown): CliError | undefined {
  const failure = error as NodeJS.ErrnoException;
  const explanation = typeof failure?.code === 'string' ? OUTPUT_FAILURES[failure.code] : undefined;
  if (explanation === undefined) return undefined;
  const where = failure.path ? ` ${failure.path}` : '';
  return new CliError(
    `could not write${where}: ${explanation} (${failure.code}).`,
    ExitCode.output,
    'Nothing was replaced: an earlier output file, if any, is as it was. Free space or fix permissions, then ' +
      'run again.',
  );
}

/** What the API client's errors mean for a cron job; any other failed request is the service's or the network's (5). */
const REQUEST_FAILURE_CODES: ReadonlyArray<readonly [new (...args: never[]) => RequestError, ExitCodeValue]> = [
  [UnanswerableError, ExitCode.unanswerable],
  [AuthError, ExitCode.auth],
  [BadRequestError, ExitCode.usage],
  [AbortedError, ExitCode.interrupted],
];

/**
 * The service's 422 codes that say the request names something that does not exist (contract row 7):
 * a typo on the command line, exit 2 like any bad value, never "nobody matched" (3) that --allow-empty
 * would turn into an empty success.
 */
const INPUT_REFUSALS: ReadonlySet<string> = new Set([
  'unknown_technology',
  'unknown_country',
  'unknown_employee_range',
  'contradictory_filters',
]);

/** What to do about an input refusal that came without suggestions to pick from. */
const INPUT_REFUSAL_HINTS: Readonly<Record<string, string>> = {
  unknown_country:
    'Give a country as the service names it or as people write it: "united states", US, UK, Deutschland.',
};

function requestFailureHint(error: RequestError): string | undefined {
  if (error.hint !== undefined || !(error instanceof UnanswerableError) || error.code === undefined) return error.hint;
  const suggestions = error.details.suggestions;
  return Array.isArray(suggestions) && suggestions.length > 0 ? undefined : INPUT_REFUSAL_HINTS[error.code];
}

function requestFailureCode(error: RequestError): ExitCodeValue {
  if (error instanceof UnanswerableError && error.code !== undefined && INPUT_REFUSALS.has(error.code))
    return ExitCode.usage;
  return REQUEST_FAILURE_CODES.find(([kind]) => error instanceof kind)?.[1] ?? ExitCode.service;
}

/**
 * An error prospect expects, as the person running it is told (message and hint) and with its exit
 * code; undefined for anything else, which is a bug (exit 1). A file-system failure of the output
 * comes first: it can surface from any layer.
 */
export function knownFailure(
  error: unknown,
): { message: string; hint?: string | undefined; exitCode: ExitCodeValue } | undefined {
  const output = outputFailure(error);
  if (output !== undefined) return output;
  if (error instanceof CliError) return error;
  if (error instanceof ClientOptionError) return { message: error.message, hint: error.hint, exitCode: ExitCode.usage };
  if (error instanceof RequestError) {
    return { message: error.message, hint: requestFailureHint(error), exitCode: requestFailureCode(error) };
  }
  return undefined;
}

/**
 * THE decision of a run's exit code, for the process exit and for every `--summary` record alike:
 * a signal that aborted the run wins, then what the error is (knownFailure), else an internal error.
 */
export function exitCodeOf(error: unknown, signal?: AbortSignal): ExitCodeValue {
  if (signal?.aborted) return signal.reason === 'SIGTERM' ? ExitCode.terminated : ExitCode.interrupted;
  if (error === undefined) return ExitCode.ok;
  return knownFailure(error)?.exitCode ?? ExitCode.internal;
}
