/**
 * The team state database's URL (PROSPECT_STATE_URL or `config set state-url`): parsed here, without
 * loading the PostgreSQL driver, so `config set` checks it and a run without one pays nothing for it.
 * TLS follows libpq's sslmode and sslrootcert, with a stricter default: verify-full for any host but
 * this machine, and plaintext off this machine only when sslmode=disable is written out.
 */
import { readFileSync } from 'node:fs';
import { UsageError } from '../exit-codes.js';
import { withoutPassword } from '../util/redact.js';
import { isLoopbackHost } from '../api/proxy.js';

const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
type SslMode = (typeof SSL_MODES)[number];

export interface StateUrl {
  /** The URL as shown: its password replaced by ***. */
  shown: string;
  host: string;
  port: number;
  database: string;
  user: string;
  password: string | undefined;
  sslmode: SslMode;
  /** Whether sslmode was written in the URL (plaintext off loopback needs it written). */
  sslmodeGiven: boolean;
  sslrootcert: string | undefined;
  /** The host is this machine (a loopback address or a Unix socket directory). */
  loopback: boolean;
}

/** libpq's query parameters that prospect reads; any other is refused rather than silently ignored. */
const KNOWN_PARAMS = new Set(['sslmode', 'sslrootcert', 'host', 'port', 'user', 'password', 'dbname']);

/** This machine: a Unix socket directory, or a loopback name or address (the client's one check). */
function isLoopback(host: string): boolean {
  return host.startsWith('/') || isLoopbackHost(host.startsWith('[') || !host.includes(':') ? host : `[${host}]`);
}

/** Checks and splits a state URL; a refusal never shows its password. */
export function parseStateUrl(text: string): StateUrl {
  const trimmed = text.trim();
  const shown = withoutPassword(trimmed);
  const refuse = (why: string, hint?: string) => new UsageError(`the state URL ${shown}: ${why}.`, hint);
  if (!/^postgres(ql)?:\/\//i.test(trimmed))
    throw refuse('it must start with postgres:// or postgresql://', 'e.g. postgresql://prospect@db.example.com/sales');
  let url: URL;
  try {
    // WHATWG URL does not know the postgres scheme's authority rules; parsed as http, it splits the same way.
    // An empty host (a socket directory given as ?host=) is not a URL to WHATWG: a placeholder stands in.
    const withHost = trimmed.replace(/^(postgres(?:ql)?:\/\/(?:[^/?#@]*@)?)(?=[/?#]|$)/i, '$1localhost');
    url = new URL(withHost.replace(/^postgres(ql)?:/i, 'http:'));
  } catch {
    throw refuse('it is not a valid URL');
  }
  const params = url.searchParams;
  for (const name of params.keys())
    if (!KNOWN_PARAMS.has(name))
      throw refuse(`the parameter "${name}" is not supported`, `Supported: ${[...KNOWN_PARAMS].join(', ')}.`);
  const host = params.get('host') ?? decodeURIComponent(url.hostname).replace(/^\[|\]$/g, '');
  if (host === '') throw refuse('it names no host');
  const port = Number(params.get('port') ?? (url.port || 5432));
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw refuse('the port is not a number from 1 to 65535');
  const database = params.get('dbname') ?? decodeURIComponent(url.pathname.replace(/^\//, ''));
  const user = params.get('user') ?? decodeURIComponent(url.username);
  if (user === '') throw refuse('it names no user', 'Write the role: postgresql://ROLE@HOST/DATABASE.');
  const password = params.get('password') ?? (url.password === '' ? undefined : decodeURIComponent(url.password));
  const givenMode = params.get('sslmode');
  if (givenMode !== null && !(SSL_MODES as readonly string[]).includes(givenMode))
    throw refuse(`sslmode "${givenMode}" is not one of ${SSL_MODES.join(', ')}`);
  const loopback = isLoopback(host);
  // libpq's default is prefer; off this machine prospect wants a verified server unless told otherwise.
  const sslmode = (givenMode ?? (loopback ? 'disable' : 'verify-full')) as SslMode;
  return {
    shown,
    host,
    port,
    database: database || user,
    user,
    password,
    sslmode,
    sslmodeGiven: givenMode !== null,
    sslrootcert: params.get('sslrootcert') ?? undefined,
    loopback,
  };
}

/** node-postgres's `ssl` option: what libpq would do for this sslmode and sslrootcert (false: plaintext). */
export function tlsOptions(
  url: StateUrl,
): false | { rejectUnauthorized: boolean; ca?: string; checkServerIdentity?: () => undefined } {
  const { sslmode } = url;
  // Off this machine only when written out: the default there is verify-full (parseStateUrl).
  if (sslmode === 'disable') return false;
  // allow and prefer fall back to plaintext in libpq; node-postgres cannot, so they stay on TLS, unverified.
  const ca = readRootCert(url);
  // libpq: require with a root certificate given behaves as verify-ca.
  const verifyChain =
    sslmode === 'verify-ca' || sslmode === 'verify-full' || (sslmode === 'require' && ca !== undefined);
  const verifyName = sslmode === 'verify-full';
  return {
    rejectUnauthorized: verifyChain,
    ...(ca !== undefined ? { ca } : {}),
    // No servername: node-postgres sets it to a host name itself, and leaves it out for an IP address,
    // which Node would warn about on stderr (DEP0123); the name check uses the host either way.
    ...(verifyChain && !verifyName ? { checkServerIdentity: () => undefined } : {}),
  };
}

/** The PEM of sslrootcert ("system": Node's own list, as libpq's sslrootcert=system). */
function readRootCert(url: StateUrl): string | undefined {
  if (url.sslrootcert === undefined || url.sslrootcert === 'system') return undefined;
  try {
    return readFileSync(url.sslrootcert, 'utf8');
  } catch (error) {
    throw new UsageError(
      `the state URL's sslrootcert ${url.sslrootcert} cannot be read ` +
        `(${(error as NodeJS.ErrnoException).code ?? 'error'}).`,
      'Give the path of the PEM file of the CA that signed the database server certificate.',
    );
  }
}

/** For `config set state-url`: checked as a run checks it; kept as written. */
export function parseStateUrlSetting(text: string): string {
  parseStateUrl(text);
  return text.trim();
}
