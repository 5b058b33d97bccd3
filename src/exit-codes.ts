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
export { CancelledError, CliError, DeclinedError, EmptyResultError, UsageError } from './errors.js';

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

/**
 * What to do about a request failure, in the CLI's words, by the error's code: src/api/ states the
 * facts (the cap in `details.cap_bytes`), the flags and commands that change them are named here.
 */
const REQUEST_FAILURE_HINTS: Readonly<Record<string, (error: RequestError) => string | undefined>> = {
  plan_required: () => 'Use a key on a plan that includes this endpoint, or try --sandbox.',
  timeout: (error) =>
    error.details.failure_class === undefined
      ? 'The service is slow or unreachable: try again later, or give it longer with --timeout SECONDS.'
      : undefined,
  network: (error) => (error.details.failure_class === 'proxy' ? PROXY_HINT : undefined),
  ENOTFOUND: () => `Check the host name in the base URL; behind a proxy, set HTTPS_PROXY (or ${SET_PROXY}).`,
  proxy_auth: (error) =>
    error.details.credentials_given === false
      ? `Put them in the proxy URL: http://user:password@host:port (HTTPS_PROXY or ${SET_PROXY}).`
      : undefined,
  answer_too_large: (error) =>
    `If answers this large are expected, raise the cap (now ${capInMiB(error)} MiB): --max-answer-size MIB, ` +
    'PROSPECT_MAX_ANSWER_SIZE or `prospect config set max-answer-size MIB`.',
  // src/api names the setting that adapts to a service that decided an open point otherwise; here, how to set it.
  contract_differs: (error) => {
    const setting = error.details.setting;
    if (typeof setting !== 'string' || !/^[a-z-]+$/.test(setting)) return error.hint;
    const how = `\`prospect config set ${setting} VALUE\` or PROSPECT_${setting.toUpperCase().replaceAll('-', '_')}`;
    return `${error.hint ?? `Set ${setting}.`} (${how}.)`;
  },
  answer_encoding_refused: () =>
    'The service or a proxy compressed the answer more than once; it must send at most one layer (gzip).',
};

const SET_PROXY = '`prospect config set proxy URL`';
const PROXY_HINT =
  'Check the proxy (HTTPS_PROXY, ALL_PROXY or `prospect config set proxy URL`) and that it is up; NO_PROXY ' +
  'lists hosts reached directly.';
const KEY_HINT = 'Set PROSPECT_API_KEY (or `prospect config set api-key`), or try --sandbox.';

/** Advice that turns on a fact other than the code: the status, a TLS problem, a rate limit given up on. */
function hintByFacts(error: RequestError): string | undefined {
  if (error.status === 401) return KEY_HINT;
  if (error.details.gave_up === 'rate_limit')
    return 'Another client may be using the same key; try again later, or with a lower --concurrency.';
  if (error.details.tls_problem === 'untrusted')
    return (
      'Set ca-file (`prospect config set ca-file PATH` or PROSPECT_CA_FILE) to the certificate of the CA that ' +
      'signed it, or add it to NODE_EXTRA_CA_CERTS.'
    );
  if (error.details.tls_problem === 'unknown')
    return 'Run `prospect doctor` to see the certificate and TLS settings in effect.';
  return undefined;
}

/** The same for an option the client refused. */
const CLIENT_OPTION_HINTS: Readonly<Record<string, string>> = {
  no_api_key: KEY_HINT,
  credentials_in_base_url: 'Put the API key in PROSPECT_API_KEY.',
};

function capInMiB(error: RequestError): number {
  const cap = error.details.cap_bytes;
  return typeof cap === 'number' ? Math.round((cap / 1024 / 1024) * 10) / 10 : 64;
}

function requestFailureHint(error: RequestError): string | undefined {
  const cli = hintByFacts(error) ?? (error.code !== undefined ? REQUEST_FAILURE_HINTS[error.code]?.(error) : undefined);
  if (cli !== undefined) return cli;
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
  if (error instanceof ClientOptionError) {
    const hint = (error.code !== undefined ? CLIENT_OPTION_HINTS[error.code] : undefined) ?? error.hint;
    return { message: error.message, hint, exitCode: ExitCode.usage };
  }
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
