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
    meaning:
      'Authentication or plan: the service refused the key (401), or the plan lacks the endpoint (403), or the ' +
      'account has no credits left to pay with (402).',
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
