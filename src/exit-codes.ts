import {
  AbortedError,
  AuthError,
  BadRequestError,
  ClientOptionError,
  RequestError,
  UnanswerableError,
} from './api/errors.js';
import { ExitCode, type ExitCodeValue } from './exit-code-table.js';
import { CliError } from './errors.js';

// One import point for what decides a run's exit code: the table, the error classes, the decision below.
export { ExitCode, EXIT_CODE_DOCS, exitCodesInOneLine, type ExitCodeValue } from './exit-code-table.js';
export { CancelledError, CliError, EmptyResultError, UsageError } from './errors.js';

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
function outputFailure(error: unknown): CliError | undefined {
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
