/**
 * Every flag, declared once (src/options/flag.ts): commander builds the option from it and the job
 * its zod schema from its form (a start-up module: README "Start-up"). The program's own flags are here too; its
 * run reads them as GlobalOptions (src/runtime/context.ts). Not here: `prospect sandbox`'s flags,
 * declared the same way beside their command (src/commands/sandbox-flags.ts), because this folder
 * may not reach the sandbox (a separate program, .dependency-cruiser.cjs), whose defaults they show.
 */
import { MAX_COMPANIES_PER_PAGE, MAX_CONTACTS_PER_CALL } from '../api/limits.js';
import { RETRY_DEFAULTS } from '../api/retry.js';
import type { ZodPipe, ZodOptional, ZodString, ZodTransform } from 'zod';
import { defineFlag, type Zod } from './flag.js';

type StdoutDash = ZodPipe<ZodOptional<ZodString>, ZodTransform<string | undefined, string | undefined>>;
import {
  collect,
  concurrencyValue,
  integerInRange,
  maxAnswerSizeValue,
  positiveInteger,
  verifyBudgetValue,
} from './values.js';

// The program's own flags, given before or after any command (src/cli.ts adds them, in this order).

/** The in-process sandbox instead of a service: no key, no address, nothing paid. */
export const SANDBOX = defineFlag({
  name: 'sandbox',
  flags: '--sandbox',
  help: 'run against an in-process sandbox with generated data (no key needed, nothing paid)',
});
/** PLANS of src/sandbox/auth.ts, copied: this folder may not reach the sandbox (a test pins the two equal). */
const SANDBOX_PLANS = ['free', 'starter', 'growth', 'scale'] as const;
export const SANDBOX_PLAN = defineFlag({
  name: 'sandboxPlan',
  flags: '--sandbox-plan <plan>',
  help: 'the sandbox key to use',
  choices: SANDBOX_PLANS,
  default: 'growth',
});
/** Set by the flag, else PROSPECT_BASE_URL, else the config key (src/config/precedence.ts). */
export const BASE_URL = defineFlag({
  name: 'baseUrl',
  flags: '--base-url <url>',
  help: 'service address (default: PROSPECT_BASE_URL or the config file)',
});
export const PAGE_SIZE = defineFlag({
  name: 'pageSize',
  flags: '--page-size <n>',
  help: `companies per request, 1 to ${MAX_COMPANIES_PER_PAGE} (smaller pages: more, smaller checkpoints)`,
  parse: integerInRange('--page-size', 1, MAX_COMPANIES_PER_PAGE),
});
/** In seconds; the client takes milliseconds (src/runtime/api-client.ts). */
export const TIMEOUT = defineFlag({
  name: 'timeout',
  flags: '--timeout <seconds>',
  help: 'give up on one request after this long (it is then retried); a connection gets at most 10 s of it',
  parse: integerInRange('--timeout', 1, 600),
  default: RETRY_DEFAULTS.timeoutMs / 1000,
});
export const MAX_RETRIES = defineFlag({
  name: 'maxRetries',
  flags: '--max-retries <n>',
  help: 'retries of a failed request (network, 408, 5xx) before exit 5; a 429 waits its Retry-After and uses none',
  parse: integerInRange('--max-retries', 0, 20),
  default: RETRY_DEFAULTS.maxRetries,
});
/**
 * The cap on one answer's decoded size (src/api/limits.ts). Set by the flag, else PROSPECT_MAX_ANSWER_SIZE,
 * else the config key (src/runtime/connection.ts reads both), else the default.
 */
export const MAX_ANSWER_SIZE = defineFlag({
  name: 'maxAnswerSize',
  flags: '--max-answer-size <MiB>',
  help: 'refuse an answer larger than this once decoded, 1 to 512 (default: 64, or PROSPECT_MAX_ANSWER_SIZE)',
  parse: maxAnswerSizeValue('--max-answer-size'),
});
export const VERBOSE = defineFlag({
  name: 'verbose',
  flags: '-v, --verbose',
  help: 'summaries and warnings on stderr even when it is not a terminal',
});
export const QUIET = defineFlag({
  name: 'quiet',
  flags: '-q, --quiet',
  help: 'nothing on stderr but errors',
});
/** PROSPECT_DEBUG=1 turns it on too (src/runtime/context.ts). */
export const DEBUG = defineFlag({
  name: 'debug',
  flags: '--debug',
  help: 'log every request (key redacted) and show stack traces',
});

// Output: every command that writes.

export const FORMAT = defineFlag({
  name: 'format',
  flags: '-f, --format <format>',
  help: 'csv, json, ndjson, table or xlsx (default: table on a terminal, csv otherwise)',
  config: { key: 'format', yieldsTo: 'output' },
});
export const OUTPUT = defineFlag({
  name: 'output',
  flags: '-o, --output <file>',
  help:
    'write to FILE atomically (a failed run leaves no partial file); - is stdout, a device or FIFO is ' +
    'written directly',
  // `-o -` is stdout, as for most programs that take a file name.
  schema: (z: Zod): StdoutDash =>
    z
      .string()
      .optional()
      .transform((path) => (path === '-' ? undefined : path)),
});
export const COLUMNS = defineFlag({
  name: 'columns',
  flags: '--columns <list>',
  help: 'columns to keep, in order; source:Header renames one (docs/crm-import.md)',
});
export const ESCAPE_FORMULAS = defineFlag({
  name: 'escapeFormulas',
  flags: '--no-escape-formulas',
  help: "do not prefix cells that start with = + - @ with ' (spreadsheet formula guard)",
});
export const BOM = defineFlag({
  name: 'bom',
  flags: '--bom',
  help:
    'start a CSV with a UTF-8 byte-order mark, so Excel on Windows reads accents right ' +
    '(Procházka, not ProchÃ¡zka)',
});
/**
 * CRM contact and lead importers are what presets are for. The names are copied from src/io/presets.ts
 * (README "Start-up"); a test checks they match.
 */
export const PRESET = defineFlag({
  name: 'preset',
  flags: '--preset <crm>',
  help: 'headers a CRM importer maps by default: hubspot or salesforce; --columns adjusts them',
});
export const SUMMARY = defineFlag({
  name: 'summary',
  flags: '--summary <file>',
  help: 'write a JSON record of the run to FILE (the fields of FILE.meta.json: docs/run-record.md)',
});
/** An empty result is exit 3 without it. */
export const ALLOW_EMPTY = defineFlag({
  name: 'allowEmpty',
  flags: '--allow-empty',
  help: 'when nothing matches (no row to write), write an empty result and exit 0 instead of exit 3',
});

// Company filters: companies, count, pipeline (src/core/companies/filters.ts).

export const TECHNOLOGY = defineFlag({
  name: 'technology',
  flags: '-t, --technology <name>',
  help: 'a technology the company runs (repeatable: all must match)',
  parse: collect,
  default: [],
});
export const NOT_TECHNOLOGY = defineFlag({
  name: 'notTechnology',
  flags: '-T, --not-technology <name>',
  help: 'a technology the company must not run (repeatable)',
  parse: collect,
  default: [],
});
export const EMPLOYEE_RANGE = defineFlag({
  name: 'employeeRange',
  flags: '--employee-range <ranges>',
  help: 'employee range: 11-500 (covers 11-50, 51-200, 201-500) or 500+; a list or repeated: any of them',
  parse: collect,
  default: [],
});
export const COUNTRY = defineFlag({
  name: 'country',
  flags: '--country <name>',
  help: 'country name or ISO code, e.g. "united states", US, UK, Deutschland (repeatable: any of them)',
  parse: collect,
  default: [],
});
export const INDUSTRY = defineFlag({
  name: 'industry',
  flags: '--industry <label>',
  help:
    'an industry label as `count --by industry` shows it, any case, e.g. "apparel and fashion" ' +
    '(repeatable: any of them); checked on each row before any contacts call',
  parse: collect,
  default: [],
});
/** The service lists sites of rank 1 to 1,000,000 only (spec §1.5). */
export const MAX_RANK = defineFlag({
  name: 'maxRank',
  flags: '--max-rank <n>',
  help: 'only companies whose popularity rank (crux_rank) is at most N, 1 to 1000000; checked on each row',
  parse: integerInRange('--max-rank', 1, 1_000_000),
});
export const MAX = defineFlag({
  name: 'max',
  flags: '--max <n>',
  help: 'stop after N rows',
  parse: positiveInteger('--max'),
});

// Exclusion lists (src/core/shared/exclusion.ts): a file is anything the domain or address
// input reads, a CRM export with a Website or Email column, a list, JSON.

export const EXCLUDE_DOMAINS = defineFlag({
  name: 'excludeDomains',
  flags: '--exclude-domains <file>',
  help: 'leave out the companies in FILE (a CRM export with a Website column, a list, JSON; repeatable)',
  parse: collect,
  default: [],
});
export const EXCLUDE_EMAILS = defineFlag({
  name: 'excludeEmails',
  flags: '--exclude-emails <file>',
  help: 'leave out the addresses in FILE, never verified or written (an Email column, a list, JSON; repeatable)',
  parse: collect,
  default: [],
});
export const KEEP_EMPTY = defineFlag({
  name: 'keepEmpty',
  flags: '--keep-empty',
  help: 'also write one row for each company without a named contact (contact columns empty, email_freshness none)',
});

// Contacts: what `contacts` and `pipeline` ask for, and what they do with old addresses.

export const SENIORITY = defineFlag({
  name: 'seniority',
  flags: '-s, --seniority <list>',
  help: 'only these seniorities: cxo, vp, director, manager, staff (comma-separated)',
});
export const LIMIT = defineFlag({
  name: 'limit',
  flags: '--limit <n>',
  help:
    `page size: the contacts one call asks for, 1 to ${MAX_CONTACTS_PER_CALL}; not a total (nothing is cut ` +
    'at any value, a lower one only costs calls; the total is --max)',
  parse: integerInRange('--limit', 1, MAX_CONTACTS_PER_CALL),
  default: MAX_CONTACTS_PER_CALL,
});
export const PER_COMPANY = defineFlag({
  name: 'perCompany',
  flags: '--per-company <n>',
  help: 'keep the N most useful contacts of each company: most senior, then fresh, then most recently confirmed',
  parse: positiveInteger('--per-company'),
});
export const DEPARTMENT = defineFlag({
  name: 'department',
  flags: '--department <list>',
  help:
    'only contacts in one of these departments (comma-separated, any case: sales,marketing); ' +
    'filtered after the calls, which ask for every department',
});
export const TITLE = defineFlag({
  name: 'title',
  flags: '--title <words>',
  help:
    'only contacts whose title contains one of these (comma-separated, any case: "head of,director"); ' +
    'filtered after the calls, which ask for every title',
});
export const DELIVERABLE_ONLY = defineFlag({
  name: 'deliverableOnly',
  flags: '--deliverable-only',
  help:
    'write only rows a rep can send to: the address verified valid, or fresh and not verified, and not a ' +
    'role or disposable address; the rows left out are counted by why',
});
export const KEEP_CLASSES = defineFlag({
  name: 'keep',
  flags: '--keep <classes>',
  help:
    'with --deliverable-only: keep these email classes it leaves out, role and/or disposable ' +
    '(comma-separated: --keep role)',
});
export const MAX_AGE = defineFlag({
  name: 'maxAge',
  flags: '--max-age <age>',
  help: 'an address last seen longer ago is stale: 90d, 6m, 1y or a date',
  default: '90d',
  config: { key: 'max-age' },
});
export const STALE = defineFlag({
  name: 'stale',
  flags: '--stale <policy>',
  help: 'what to do with stale addresses: keep, drop or verify',
  default: 'keep',
});
export const CONCURRENCY = defineFlag({
  name: 'concurrency',
  flags: '--concurrency <n>',
  help: 'service calls in flight at once, 1 to 32',
  parse: concurrencyValue('--concurrency'),
  default: 4,
  config: { key: 'concurrency' },
});

// Spending (src/core/verification/consent.ts): every command that verifies.

export const VERIFY_BUDGET = defineFlag({
  name: 'verifyBudget',
  flags: '--verify-budget <units>',
  help: 'with --stale verify: at most this many paid verifications (oldest first)',
  parse: verifyBudgetValue('--verify-budget'),
});
/** Consent to spend without a question. */
export const YES = defineFlag({
  name: 'yes',
  flags: '-y, --yes',
  help: 'with --stale verify: spend without asking (a pipe or cron needs --yes or a budget)',
});
export const CACHE_TTL = defineFlag({
  name: 'cacheTtl',
  flags: '--cache-ttl <age>',
  help: 'reuse verification results younger than this',
  default: '30d',
});
export const CACHE = defineFlag({
  name: 'cache',
  flags: '--no-cache',
  help: 'do not reuse or store verification results',
});

// Inputs of domains or addresses.

export const STRICT = defineFlag({
  name: 'strict',
  flags: '--strict',
  help: 'any invalid domain in the input is an error (exit 2) before any request',
});
export const DOMAINS_FILE = defineFlag({
  name: 'domainsFile',
  flags: '--domains-file <file>',
  help: 'read domains from FILE ("-" for stdin)',
});
export const DOMAIN_COLUMN = defineFlag({
  name: 'domainColumn',
  flags: '--domain-column <name>',
  help:
    "the column that holds the domain (default: domain, else a CRM's Website, Company Domain Name, " +
    'Website URL or URL)',
});
export const KEEP_COLUMNS = defineFlag({
  name: 'keepColumns',
  flags: '--keep-columns <list>',
  help:
    "copy these columns of the input (a companies export: industry, country, …) onto each of the company's " +
    'contacts; --preset copies company_name, industry, country and employee_range where the input has them',
});
export const FILE = defineFlag({
  name: 'file',
  flags: '--file <file>',
  help: 'read addresses from FILE ("-" for stdin)',
});
export const EMAIL_COLUMN = defineFlag({
  name: 'emailColumn',
  flags: '--email-column <name>',
  help: "the column that holds the address (default: business_email, email, else a CRM's Email Address)",
});

// verify

/** The older name of --verify-budget, kept working. */
export const BUDGET = defineFlag({
  name: 'budget',
  flags: '--budget <units>',
  help: 'the same as --verify-budget (its older name)',
  parse: integerInRange('--budget', 0),
});
export const CONFIRM_OVER = defineFlag({
  name: 'confirmOver',
  flags: '--confirm-over <units>',
  help: 'on a terminal, ask only before spending more than this',
  parse: integerInRange('--confirm-over', 0),
  default: 0,
});
export const DRY_RUN = defineFlag({
  name: 'dryRun',
  flags: '--dry-run',
  help: 'print how many units the run would spend, and spend none',
});

// pipeline

export const STATE = defineFlag({
  name: 'state',
  flags: '--state <dir>',
  help: 'keep a checkpoint, the exported leads, paid verifications and the listing (for --changes) in DIR',
});
export const ONLY_NEW = defineFlag({
  name: 'onlyNew',
  flags: '--only-new',
  help: 'with --state: write only leads that no earlier successful run exported',
});

// count

export const CHANGES = defineFlag({
  name: 'changes',
  flags: '--changes',
  help:
    'with --state: write what changed since the last complete listing of the same filters ' +
    '(columns change, technologies_added, technologies_removed, first_seen, previous_snapshot)',
});
export const CHANGE = defineFlag({
  name: 'change',
  flags: '--change <kinds>',
  help: 'with --changes: keep these kinds only: new, changed, gone (comma-separated; default new,changed,gone)',
});
export const BY = defineFlag({
  name: 'by',
  flags: '--by <dimension>',
  help:
    'break the set down by country, employee_range, industry, technology or category; or by change ' +
    '(with --state: new, changed, gone since the last complete listing, and the technologies most added and removed)',
});
export const TOP = defineFlag({
  name: 'top',
  flags: '--top <n>',
  help:
    'with --by: the N largest segments, then one "other" row for the rest if any company is left ' +
    '(by technology: the companies that run none of the N) (0: all)',
  parse: integerInRange('--top', 0),
  default: 10,
});
