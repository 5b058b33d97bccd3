import { CONTRACT_SETTINGS } from '../api/contract.js';

/**
 * The settings `prospect config` knows, where else each can come from, and what applies when
 * nothing sets it. One table, so `config`, the reader, completion and the docs cannot disagree.
 * A start-up module (README "Start-up"); the checks of the values live in ./validate.ts. The
 * contract's settings are named once, in src/api/contract.ts (which imports nothing).
 */
export const CONFIG_KEYS = [
  'api-key',
  'base-url',
  'proxy',
  'ca-file',
  ...CONTRACT_SETTINGS,
  'max-age',
  'concurrency',
  'format',
  'verify-budget',
  'max-answer-size',
  'exclude-domains',
  'exclude-emails',
  'state-url',
  'team-key',
] as const;
export type ConfigKey = (typeof CONFIG_KEYS)[number];

export interface ConfigKeySpec {
  summary: string;
  /** The environment variable that takes precedence over the file, if there is one. */
  env?: string;
  /** What applies when nothing sets the key, in words (shown by `config list`); none for a setting a run needs. */
  fallback?: string;
  /** Shown redacted everywhere, and only ever read from stdin or a hidden prompt. */
  secret: boolean;
  /** A URL that may carry a password, shown without it. */
  url?: boolean;
  /** A value for the examples in help and docs. */
  example: string;
}

export const CONFIG_KEY_SPECS: Readonly<Record<ConfigKey, ConfigKeySpec>> = {
  'api-key': {
    summary: 'the service key (read from stdin or a hidden prompt, never from the command line)',
    env: 'PROSPECT_API_KEY',
    secret: true,
    example: '',
  },
  'base-url': {
    summary: 'the service root, https:// (plain http only to this machine)',
    env: 'PROSPECT_BASE_URL',
    secret: false,
    example: 'https://api.example.com',
  },
  proxy: {
    summary:
      'the proxy to reach the service through, http://[user:password@]host:port; before HTTPS_PROXY, ' +
      'ALL_PROXY (NO_PROXY still applies)',
    fallback: 'HTTPS_PROXY / HTTP_PROXY / ALL_PROXY, else none',
    secret: false,
    url: true,
    example: 'http://proxy.example.com:3128',
  },
  'ca-file': {
    summary: "a PEM file of CA certificates to trust besides the usual ones (the service's or a proxy's private CA)",
    env: 'PROSPECT_CA_FILE',
    fallback: "Node's list of CAs (SSL_CERT_FILE replaces it, NODE_EXTRA_CA_CERTS adds to it)",
    secret: false,
    example: 'corporate-ca.pem',
  },
  'cursor-param': {
    summary: 'the name of the paging parameter, if the service does not call it "cursor"',
    env: 'PROSPECT_CURSOR_PARAM',
    fallback: 'cursor',
    secret: false,
    example: 'page_token',
  },
  paging: {
    summary: 'how the service pages a listing: cursor, or offset (then offset-param names the parameter)',
    env: 'PROSPECT_PAGING',
    fallback: 'cursor',
    secret: false,
    example: 'offset',
  },
  'offset-param': {
    summary: 'with paging offset, the name of the parameter that carries the offset',
    env: 'PROSPECT_OFFSET_PARAM',
    fallback: 'offset',
    secret: false,
    example: 'skip',
  },
  'page-size-param': {
    summary: 'the name of the page-size parameter of a companies listing',
    env: 'PROSPECT_PAGE_SIZE_PARAM',
    fallback: 'limit',
    secret: false,
    example: 'per_page',
  },
  'page-size-max': {
    summary: 'the most rows a page may be asked for, if the service allows fewer than 1000',
    env: 'PROSPECT_PAGE_SIZE_MAX',
    fallback: '1000',
    secret: false,
    example: '100',
  },
  'contact-fields': {
    summary: "the service's names for contact fields: ours=theirs pairs, separated by commas",
    env: 'PROSPECT_CONTACT_FIELDS',
    fallback: 'none: the contract names (business_email, business_email_last_seen, ...)',
    secret: false,
    example: 'business_email=email,business_email_last_seen=last_seen_at',
  },
  'date-format': {
    summary: 'how contact dates that are not ISO are written: iso, dmy (30/11/2026) or mdy (11/30/2026)',
    env: 'PROSPECT_DATE_FORMAT',
    fallback: 'iso',
    secret: false,
    example: 'dmy',
  },
  'verify-path': {
    summary: 'the path of the paid verification call, from the service root',
    env: 'PROSPECT_VERIFY_PATH',
    fallback: '/api/v1/verify',
    secret: false,
    example: '/api/v2/email-verifier',
  },
  'verify-method': {
    summary: 'GET (the address in the query) or POST (the address in a JSON body)',
    env: 'PROSPECT_VERIFY_METHOD',
    fallback: 'GET',
    secret: false,
    example: 'POST',
  },
  'verify-param': {
    summary: 'the name of the parameter (or JSON field) that carries the address to verify',
    env: 'PROSPECT_VERIFY_PARAM',
    fallback: 'email',
    secret: false,
    example: 'address',
  },
  'verify-statuses': {
    summary:
      "the service's verification words prospect does not know: theirs=ours pairs, ours one of valid, invalid, " +
      'risky, unknown',
    env: 'PROSPECT_VERIFY_STATUSES',
    fallback: 'none: the common vocabularies (deliverable, accept_all, catch_all, ...)',
    secret: false,
    example: 'ok=valid,greylisted=unknown',
  },
  'max-age': {
    summary: 'default --max-age: an address last seen longer ago is stale (90d, 6m, 1y or a date)',
    fallback: '90d',
    secret: false,
    example: '6m',
  },
  concurrency: {
    summary: 'default --concurrency: service calls in flight at once, 1 to 32',
    fallback: '4',
    secret: false,
    example: '8',
  },
  format: {
    summary: 'default --format when there is no -o FILE: csv, json, ndjson, table or xlsx',
    fallback: 'table on a terminal, csv otherwise',
    secret: false,
    example: 'csv',
  },
  'verify-budget': {
    summary:
      'default --verify-budget: at most this many paid verifications a run, and consent to spend them in a ' +
      'pipe or cron',
    fallback: 'none: a paid run off a terminal needs --verify-budget or --yes',
    secret: false,
    example: '200',
  },
  'max-answer-size': {
    summary: 'default --max-answer-size: the largest answer, in MiB once decoded, a run accepts (1 to 512)',
    env: 'PROSPECT_MAX_ANSWER_SIZE',
    fallback: '64',
    secret: false,
    example: '256',
  },
  'exclude-domains': {
    summary: 'a standing --exclude-domains list applied to every run (a file; it must exist when set and at every run)',
    fallback: 'none',
    secret: false,
    example: 'customers.csv',
  },
  'exclude-emails': {
    summary:
      'a standing --exclude-emails list (do not contact) applied to every run (a file; it must exist when set ' +
      'and at every run)',
    fallback: 'none',
    secret: false,
    example: 'do-not-contact.csv',
  },
  'state-url': {
    summary:
      "the team's PostgreSQL database, postgres://ROLE[:PASSWORD]@HOST/DB[?sslmode=...]: the paid-verification " +
      'ledger is shared there, and `pipeline --state pg:NAME` keeps its jobs there (docs/team.md)',
    env: 'PROSPECT_STATE_URL',
    fallback: 'none: state stays on this machine (files and SQLite)',
    secret: false,
    url: true,
    example: 'postgresql://prospect@db.example.com/sales',
  },
  'team-key': {
    summary:
      "the team's shared key, 32 characters or more, the same on every machine of the team: the team database " +
      'keeps addresses and leads keyed with it, and never holds it (read from stdin or a hidden prompt; ' +
      'docs/team.md)',
    env: 'PROSPECT_TEAM_KEY',
    fallback: 'none: required with a state URL',
    secret: true,
    example: '',
  },
};
