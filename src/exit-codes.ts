import { ClientOptionError, RequestError, type FailureKind } from './api/errors.js';
import { ExitCode, type ExitCodeValue } from './exit-code-table.js';
import { CliError } from './errors.js';
import { displaySafe } from './util/display-safe.js';

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

const SET_PROXY = '`prospect config set proxy URL`';
const KEY_HINT = 'Set PROSPECT_API_KEY (or `prospect config set api-key`), or try --sandbox.';
const UNTRUSTED_HINT =
  'Set ca-file (`prospect config set ca-file PATH` or PROSPECT_CA_FILE) to the certificate of the CA that ' +
  'signed it, or add it to NODE_EXTRA_CA_CERTS.';

/** What a failure means for the person and for cron: its exit code (default 5) and what to do. */
interface Advice {
  exit?: ExitCodeValue;
  hint?: string | ((error: RequestError) => string | undefined);
}

/**
 * THE table of what the CLI does about each kind of failed request (src/api/errors.ts FailureKind;
 * the message of each is the library's, src/api/failures.ts). Every kind is listed, so a new one
 * does not compile until it is given its exit code and hint here.
 */
const REQUEST_FAILURES: { readonly [K in FailureKind]: Advice } = {
  auth: { exit: ExitCode.auth, hint: KEY_HINT },
  plan: { exit: ExitCode.auth, hint: 'Use a key on a plan that includes this endpoint, or try --sandbox.' },
  forbidden: { exit: ExitCode.auth },
  unanswerable: { exit: ExitCode.unanswerable, hint: unanswerableHint },
  // A name the service does not know: a typo, exit 2 like any bad value, never "nobody matched" (3).
  refused_value: { exit: ExitCode.usage, hint: unanswerableHint },
  unreadable_refusal: {
    hint:
      'This is the service breaking its contract, or wording its errors in a way prospect does not read; ' +
      'check the filters, and report it to the service if it persists.',
  },
  bad_request: { exit: ExitCode.usage },
  not_found: { exit: ExitCode.usage, hint: 'Check the base URL: it is the service root, without /api/v1.' },
  redirect: { hint: 'Use the final address as the base URL if you trust it.' },
  client_certificate: {
    hint:
      'prospect does not support client certificates; ask for API-key access without one, or reach the ' +
      'service another way.',
  },
  unavailable: {},
  unexpected_status: {},
  rate_limited: {
    hint: 'Another client may be using the same key; try again later, or with a lower --concurrency.',
  },
  wait_too_long: {},
  status: { hint: 'Try again later; check the service status.' },
  dns: { hint: "Check the host name in the base URL and this machine's DNS; behind a proxy, set HTTPS_PROXY." },
  refused: {
    hint: "Nothing accepts connections there: check the base URL's host and port, and that the service is up.",
  },
  connection: { hint: 'The connection kept failing: try again later; check the service status and the base URL.' },
  proxy_unreachable: {
    hint:
      'Check the proxy (HTTPS_PROXY, ALL_PROXY or `prospect config set proxy URL`) and that it is up; NO_PROXY ' +
      'lists hosts reached directly.',
  },
  timeout: { hint: 'The service is slow or unreachable: try again later, or give it longer with --timeout SECONDS.' },
  connecting: {
    hint:
      "Nothing completed a connection there: check the base URL's host and port, a firewall, and whether a " +
      'proxy is needed (HTTPS_PROXY).',
  },
  answer_lost: { hint: 'Try again later: the service answered, but its answers arrived broken or cut short.' },
  unreachable: {
    hint: `Check the host name in the base URL; behind a proxy, set HTTPS_PROXY (or ${SET_PROXY}).`,
  },
  tls_untrusted: { hint: UNTRUSTED_HINT },
  tls_expired: { hint: "The service must renew its certificate; if it has, check this machine's clock (`date`)." },
  tls_not_yet_valid: { hint: "Check this machine's clock (`date`); otherwise the service must fix its certificate." },
  tls_hostname: {
    hint:
      'Use the host name the certificate names in the base URL (check for a typo or an IP address in place ' +
      'of the name).',
  },
  tls_not_tls: { hint: 'Check the base URL: the port, and https:// against http://.' },
  tls_old_version: { hint: 'The service must enable TLS 1.2 or 1.3.' },
  tls_client_certificate: {
    hint: 'prospect does not support client certificates; ask for API-key access without one.',
  },
  tls_failed: { hint: 'Run `prospect doctor` to see the certificate and TLS settings in effect.' },
  proxy_dns: { hint: "Check the host name in the base URL; the proxy's DNS does not know it." },
  proxy_auth: {
    hint: (error) =>
      error.details.credentials_given === true
        ? 'The proxy refused the user name and password in its URL; check them.'
        : `Put them in the proxy URL: http://user:password@host:port (HTTPS_PROXY or ${SET_PROXY}).`,
  },
  proxy_refused: {
    hint:
      'The proxy does not allow this host or port; ask its administrator, or add the host to NO_PROXY if it ' +
      'is reachable directly.',
  },
  answer_refused: {
    hint: (error) =>
      error.code === 'answer_too_large'
        ? `If answers this large are expected, raise the cap (now ${capInMiB(error)} MiB): --max-answer-size MIB, ` +
          'PROSPECT_MAX_ANSWER_SIZE or `prospect config set max-answer-size MIB`.'
        : 'The service or a proxy compressed the answer more than once; it must send at most one layer (gzip).',
  },
  malformed: { hint: contractHint },
  aborted: { exit: ExitCode.interrupted },
};

/** `suggestions` and `valid_values` (contract row 7) become a hint, unless the reason names them already. */
function unanswerableHint(error: RequestError): string | undefined {
  const [label, values] =
    Array.isArray(error.details.suggestions) && error.details.suggestions.length > 0
      ? ['Closest names', error.details.suggestions]
      : ['Valid values', error.details.valid_values];
  if (Array.isArray(values) && values.length > 0) {
    if (values.every((item) => error.reason.includes(String(item)))) return undefined;
    return `${label}: ${values.map((item) => displaySafe(String(item))).join(', ')}.`;
  }
  return error.code === 'unknown_country'
    ? 'Give a country as the service names it or as people write it: "united states", US, UK, Deutschland.'
    : undefined;
}

/** src/api names the setting that adapts to a service that decided an open point otherwise; here, how to set it. */
function contractHint(error: RequestError): string | undefined {
  const setting = error.details.setting;
  if (error.code !== 'contract_differs' || typeof setting !== 'string' || !/^[a-z-]+$/.test(setting)) return error.hint;
  const how = `\`prospect config set ${setting} VALUE\` or PROSPECT_${setting.toUpperCase().replaceAll('-', '_')}`;
  return `${error.hint ?? `Set ${setting}.`} (${how}.)`;
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

/** The CLI's failure for a failed request: the library's message, and the table's exit code and hint. */
function requestFailure(error: RequestError): { message: string; hint?: string | undefined; exitCode: ExitCodeValue } {
  const { exit = ExitCode.service, hint } = REQUEST_FAILURES[error.kind];
  return { message: error.message, hint: typeof hint === 'function' ? hint(error) : hint, exitCode: exit };
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
  if (error instanceof RequestError) return requestFailure(error);
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
