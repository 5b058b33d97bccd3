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
  interrupted: 130,
  terminated: 143,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export const EXIT_CODE_DOCS: ReadonlyArray<{ code: ExitCodeValue; meaning: string }> = [
  { code: ExitCode.ok, meaning: 'Success (also: a verify budget that ran out; the summary counts what is unchecked).' },
  { code: ExitCode.internal, meaning: 'Internal error in prospect: a bug; rerun with --debug and report it.' },
  { code: ExitCode.usage, meaning: 'Usage or input error (bad flag, bad value, invalid input, missing key); nothing was paid for.' },
  { code: ExitCode.unanswerable, meaning: 'The service would not answer the request (422): the filters match nobody, an unknown technology, ...' },
  { code: ExitCode.auth, meaning: 'Authentication or plan: the key is missing or unknown (401), or the plan lacks the endpoint (403).' },
  { code: ExitCode.service, meaning: 'The service or the network failed after retries, or answered something malformed.' },
  { code: ExitCode.locked, meaning: 'Another pipeline run holds the same --state directory.' },
  { code: ExitCode.interrupted, meaning: 'Interrupted (SIGINT, Ctrl-C). A pipeline with --state resumes when run again.' },
  { code: ExitCode.terminated, meaning: 'Terminated (SIGTERM). A pipeline with --state resumes when run again.' },
];

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
