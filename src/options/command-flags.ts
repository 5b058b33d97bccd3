/**
 * Each job command's flags, in the order its help lists them: the command adds them as options
 * (src/commands/), the job builds its schema from them (src/core/). Where a command says more of a
 * flag than the others, it changes the help (and the default) and keeps the rest of the flag.
 */
import { defineFlag, type Flag } from './flag.js';
import * as flag from './flags.js';

/** The program's own flags, in the order its help lists them. */
export const GLOBAL_FLAGS = [
  flag.SANDBOX,
  flag.SANDBOX_PLAN,
  flag.BASE_URL,
  flag.PAGE_SIZE,
  flag.TIMEOUT,
  flag.MAX_RETRIES,
  flag.MAX_ANSWER_SIZE,
  flag.VERBOSE,
  flag.QUIET,
  flag.DEBUG,
] as const;

const OUTPUT_FLAGS = [flag.FORMAT, flag.OUTPUT, flag.COLUMNS, flag.ESCAPE_FORMULAS, flag.BOM] as const;
export const COMPANY_FILTER_FLAGS = [
  flag.TECHNOLOGY,
  flag.NOT_TECHNOLOGY,
  flag.EMPLOYEE_RANGE,
  flag.COUNTRY,
  flag.INDUSTRY,
  flag.MAX_RANK,
] as const;

/** What `contacts` and `pipeline` share, with one set of defaults and bounds. */
export const CONTACT_FLAGS = [
  flag.SENIORITY,
  flag.DEPARTMENT,
  flag.TITLE,
  flag.LIMIT,
  flag.PER_COMPANY,
  flag.MAX_AGE,
  flag.STALE,
  flag.DELIVERABLE_ONLY,
  flag.KEEP_CLASSES,
  flag.VERIFY_BUDGET,
  flag.YES,
  flag.CONCURRENCY,
  flag.CACHE_TTL,
  flag.CACHE,
  flag.SUMMARY,
] as const;

export const COMPANIES_FLAGS = [
  ...COMPANY_FILTER_FLAGS,
  flag.ALLOW_EMPTY,
  flag.MAX,
  defineFlag({
    ...flag.CONCURRENCY,
    help:
      'service calls in flight at once, 1 to 32: a listing of more than 4 pages is split into up to N parts ' +
      '(8 at most) walked at once, same rows in the same order; 1 walks one cursor',
    default: 1,
  }),
  flag.EXCLUDE_DOMAINS,
  defineFlag({
    ...flag.STATE,
    help: 'keep a snapshot of each complete listing in DIR (or the team store, pg:NAME), for --changes',
  }),
  flag.CHANGES,
  flag.CHANGE,
  flag.SUMMARY,
  ...OUTPUT_FLAGS,
] as const;

export const CONTACTS_FLAGS = [
  flag.DOMAINS_FILE,
  flag.DOMAIN_COLUMN,
  flag.KEEP_COLUMNS,
  flag.STRICT,
  defineFlag({
    ...flag.MAX,
    help: 'write at most N rows in all; calls stop as soon as they are written (--limit is a page size)',
  }),
  ...CONTACT_FLAGS,
  flag.EXCLUDE_DOMAINS,
  flag.EXCLUDE_EMAILS,
  flag.KEEP_EMPTY,
  flag.ALLOW_EMPTY,
  ...OUTPUT_FLAGS,
  flag.PRESET,
] as const;

export const VERIFY_FLAGS = [
  flag.FILE,
  flag.EMAIL_COLUMN,
  defineFlag({
    ...flag.VERIFY_BUDGET,
    help: 'spend at most this many units (oldest addresses first); the rest are marked unchecked',
  }),
  flag.BUDGET,
  flag.DRY_RUN,
  defineFlag({ ...flag.YES, help: 'spend without asking (a pipe or cron needs --yes or a budget)' }),
  flag.CONFIRM_OVER,
  defineFlag({ ...flag.CONCURRENCY, help: 'checks in flight at once, 1 to 32' }),
  defineFlag({ ...flag.CACHE_TTL, help: 'reuse results younger than this (30d, 6m, …)' }),
  defineFlag({ ...flag.CACHE, help: 'do not reuse or store results' }),
  defineFlag({ ...flag.STRICT, help: 'any malformed address is an error (exit 2) before any request' }),
  flag.SUMMARY,
  flag.EXCLUDE_EMAILS,
  ...OUTPUT_FLAGS,
] as const;

export const PIPELINE_FLAGS = [
  ...COMPANY_FILTER_FLAGS,
  flag.ALLOW_EMPTY,
  defineFlag({ ...flag.MAX, help: 'stop after N companies (their leads are all written)' }),
  flag.EXCLUDE_DOMAINS,
  flag.EXCLUDE_EMAILS,
  flag.KEEP_EMPTY,
  ...CONTACT_FLAGS,
  flag.STATE,
  flag.ONLY_NEW,
  defineFlag({
    ...flag.CHANGES,
    help:
      'with --state: contacts only for the companies new or changed since the last complete listing of the ' +
      'same filters in the state (the weekly "new adopters" job)',
  }),
  defineFlag({ ...flag.CHANGE, help: 'with --changes: the kinds to ask contacts for: new, changed (default both)' }),
  defineFlag({
    ...flag.DRY_RUN,
    help: 'say what a run would do (set size, leads, stale share, units, time) from a small sample; spend nothing',
  }),
  ...OUTPUT_FLAGS,
  flag.PRESET,
] as const;

export const DOCTOR_FLAGS = [
  defineFlag({
    name: 'verify',
    flags: '--verify <address>',
    help: 'also check the verify endpoint with this one address: one paid unit, asked first, kept in the ledger',
  }),
  defineFlag({ ...flag.YES, help: 'with --verify: pay the one unit without asking (a pipe or cron needs it)' }),
] as const;

export const STATE_LIST_FLAGS = [
  defineFlag({
    ...flag.STATE,
    help: 'the --state directory whose job to list; without it (or with pg), the jobs of the team store',
  }),
  flag.FORMAT,
] as const;

export const STATE_SHOW_FLAGS = [flag.FORMAT] as const;

export const STATE_RESET_FLAGS = [
  defineFlag({
    name: 'forgetExports',
    flags: '--forget-exports',
    help: 'also forget which leads the job exported, so --only-new hands them out again (asked first)',
  }),
  defineFlag({ ...flag.YES, help: 'with --forget-exports: do it without asking (a pipe or cron needs it)' }),
  flag.FORMAT,
] as const;

export const COUNT_FLAGS = [
  ...COMPANY_FILTER_FLAGS,
  flag.ALLOW_EMPTY,
  flag.BY,
  flag.TOP,
  flag.CONCURRENCY,
  flag.EXCLUDE_DOMAINS,
  defineFlag({
    ...flag.STATE,
    help: 'with --by change: compare with the last complete listing of the same filters kept in DIR (or pg:NAME)',
  }),
  ...OUTPUT_FLAGS,
] as const;

/** The flags whose default the config file may set (src/config/defaults.ts), once each. */
export const CONFIGURABLE_FLAGS: readonly Flag[] = [
  ...new Map(
    ([COMPANIES_FLAGS, CONTACTS_FLAGS, VERIFY_FLAGS, PIPELINE_FLAGS, COUNT_FLAGS] as readonly (readonly Flag[])[])
      .flat()
      .filter((each) => each.config !== undefined)
      .map((each) => [each.name, each]),
  ).values(),
];
