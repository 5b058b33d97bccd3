/**
 * One connection to the team database per process, used by the verification ledger and a pipeline
 * job alike: the job's session advisory lock and the claims' holder are this connection's server
 * session, so a process that dies frees both at once (a pooler that shares sessions is refused).
 * Its calls go one at a time (`exclusive`): a transaction never takes in another task's statement.
 * A lost connection is latched the moment pg reports it ('error', 'end'): every later call ends with
 * exit 5, and the verifier asks `lossError()` before each paid call, so none follows the loss.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { CliError, ExitCode, UsageError } from '../../../exit-codes.js';
import { tlsOptions, type StateUrl } from '../../../config/state-url.js';
import { redact, withoutPassword } from '../../../util/redact.js';
import { backendOf, sessionPath, type SessionPath } from './pooler.js';

/** prospect's own schema in the team database (./schema.ts creates it), first on the session's search_path. */
export const SCHEMA = 'prospect';

/** The paths a session is accepted on. */
type KeptPath = Exclude<SessionPath, 'shared' | 'unknown'>;

/**
 * Set once connected rather than as the startup `options`, which PgBouncer refuses to pass on.
 * search_path: prospect's schema, then the catalog, then pg_temp (searched first for tables unless
 * named), never `public`, where another role may have put functions that shadow the built-ins; every
 * call in prospect's SQL is qualified as well. Server-side keepalives and TCP_USER_TIMEOUT: a holder
 * cut off by the network is dropped within about a minute.
 */
const SESSION_SETTINGS =
  `SELECT pg_catalog.set_config('search_path', '${SCHEMA}, pg_catalog, pg_temp', false); ` +
  'SET tcp_keepalives_idle = 15; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 6; ' +
  'SET tcp_user_timeout = 60000';
const CONNECT_TIMEOUT_MS = 10_000;
/** A statement that does not answer in this time is a lost session (a partition the kernel has not noticed). */
const QUERY_TIMEOUT_MS = 90_000;
/** The pooler check's second connection gets the time the first one has (a slow answer is a refusal). */
const PROBE_TIMEOUT_MS = CONNECT_TIMEOUT_MS;

export type Query = (text: string, values?: unknown[]) => Promise<pg.QueryResult>;

export class PgSession {
  /** This client session, as the claims name their holder (a server process may serve several in turn). */
  readonly id = randomUUID();
  private queue: Promise<unknown> = Promise.resolve();
  private lost: Error | undefined;
  private closed = false;

  private constructor(
    private readonly client: pg.Client,
    readonly url: StateUrl,
    readonly backendPid: number,
    /** How the connection reaches its server session (`prospect doctor` says it). */
    readonly path: KeptPath,
  ) {
    client.on('error', (error) => {
      this.lost ??= error;
    });
    client.on('end', () => {
      this.lost ??= new Error('the server closed the connection');
    });
  }

  /**
   * Connects, refusing (exit 2) a pooler that would share this session with other clients, and one
   * whose check could not decide: behind a pooler that shares sessions a job's lock means nothing.
   */
  static async connect(url: StateUrl, applicationName: string): Promise<PgSession> {
    const client = newClient(url, applicationName, CONNECT_TIMEOUT_MS, QUERY_TIMEOUT_MS);
    try {
      await client.connect();
      await client.query(SESSION_SETTINGS);
      const backend = await backendOf(client);
      const path = await sessionPath(client, backend, async () => {
        const probe = newClient(url, `${applicationName} check`.slice(0, 63), PROBE_TIMEOUT_MS, PROBE_TIMEOUT_MS);
        await probe.connect().catch(async (error: unknown) => {
          await probe.end().catch(() => {});
          throw error;
        });
        return probe;
      });
      if (path === 'shared') throw sharedSession(url);
      if (path === 'unknown') throw undecidedSession(url);
      return new PgSession(client, url, backend.pid, path);
    } catch (error) {
      await client.end().catch(() => {});
      throw connectFailure(url, error);
    }
  }

  /** Runs `work` alone on the connection. */
  exclusive<T>(work: (query: Query) => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      this.assertAlive();
      try {
        return await work((text, values) => this.client.query(text, values));
      } catch (error) {
        throw this.statementFailure(error);
      }
    });
    this.queue = run.catch(() => {});
    return run;
  }

  /** One transaction; retried from the start on a deadlock (40P01) or a serialization failure. */
  transaction<T>(work: (query: Query) => Promise<T>): Promise<T> {
    return this.exclusive(async (query) => {
      for (let attempt = 1; ; attempt += 1) {
        await query('BEGIN');
        try {
          const result = await work(query);
          await query('COMMIT');
          return result;
        } catch (error) {
          await query('ROLLBACK').catch(() => {});
          const code = (error as { code?: string }).code;
          if ((code === '40P01' || code === '40001') && attempt < 5) continue;
          throw error;
        }
      }
    });
  }

  query(text: string, values?: unknown[]): Promise<pg.QueryResult> {
    return this.exclusive((query) => query(text, values));
  }

  assertAlive(): void {
    const lost = this.lossError();
    if (lost) throw lost;
  }

  /** The exit-5 error of a session the server or the network ended; undefined while it lives (or was closed here). */
  lossError(): CliError | undefined {
    if (this.lost === undefined || this.closed) return undefined;
    return sessionLost(this.url, this.lost);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.lost ??= new Error('closed');
    await this.client.end().catch(() => {});
  }

  /** What a failed statement means for the run: the server's refusal or a lost session is exit 5, never 1. */
  private statementFailure(error: unknown): unknown {
    if (error instanceof CliError) return error;
    const code = (error as { code?: string }).code;
    // The server's own words (57P01 "terminating connection ...") say more than the 'end' that follows them.
    if (code !== undefined && /^(08|57P)/.test(code) && (this.lost === undefined || !('code' in this.lost)))
      this.lost = error as Error;
    if (
      this.lost ||
      code === undefined ||
      /^(08|57P)/.test(code) ||
      /timeout|terminated|ECONN|EPIPE/i.test(String(error))
    )
      return sessionLost(this.url, this.lost ?? (error as Error));
    // prospect's own SQL or data at fault (syntax, a type, a constraint): a bug, exit 1.
    if (/^(22|23|42)/.test(code) && code !== '42501') return error;
    return privilegeOrSchemaFailure(this.url, error) ?? storeRefused(this.url, error, code);
  }
}

function newClient(url: StateUrl, applicationName: string, connectMs: number, queryMs: number): pg.Client {
  const client = new pg.Client({
    host: url.host,
    port: url.port,
    user: url.user,
    password: url.password,
    database: url.database,
    ssl: tlsOptions(url),
    keepAlive: true,
    keepAliveInitialDelayMillis: 15_000,
    connectionTimeoutMillis: connectMs,
    query_timeout: queryMs,
    application_name: applicationName,
  });
  // Until connect settles, a failure is connect's to report.
  client.on('error', () => {});
  return client;
}

/** host:port, as a person looks for it (a Unix socket directory and its port for a socket). */
function whereOf(url: StateUrl): string {
  return `${url.host.includes(':') ? `[${url.host}]` : url.host}:${url.port}`;
}

function sharedSession(url: StateUrl): UsageError {
  return new UsageError(
    `the state database at ${whereOf(url)} is reached through a pooler in transaction or statement mode, ` +
      "which shares one server session among its clients: a job's lock and the address claims need their own.",
    'Connect to PostgreSQL directly, or to a pool in session mode (PgBouncer pool_mode=session); see docs/team.md.',
  );
}

function undecidedSession(url: StateUrl): UsageError {
  return new UsageError(
    `the state database at ${whereOf(url)} is reached through something that relays the connection (a pooler, ` +
      "a proxy), and prospect could not tell whether it keeps this connection's server session: a second " +
      `connection got none within ${PROBE_TIMEOUT_MS / 1000} s.`,
    'Connect to PostgreSQL itself, not through the pooler (the server host and its port, usually 5432), or to a ' +
      'PgBouncer pool in session mode with a free server connection; see docs/team.md.',
  );
}

function sessionLost(url: StateUrl, cause: Error): CliError {
  return new CliError(
    `lost the session with the state database at ${whereOf(url)}, database ${url.database} ` +
      `(${reasonOf(url, cause)}); no paid call was started after it.`,
    ExitCode.service,
    'Run the same command again once the database is up: what was paid is kept (answers that could not be ' +
      'stored wait in the local spool, read into the store before the next paid call).',
  );
}

/**
 * A statement the server refused for its own reasons (a full disk, a read-only server, an I/O error):
 * the store failed, exit 5 with the server's words and the fix, never an internal error.
 */
function storeRefused(url: StateUrl, error: unknown, code: string): CliError {
  const where = `the state database at ${whereOf(url)}, database ${url.database}`;
  const hint = code.startsWith('53')
    ? 'Free what the server lacks (disk space, memory, connections: its words say), then run the same command again.'
    : code === '25006'
      ? 'The server takes no writes (a standby, or default_transaction_read_only): point the state URL at the primary.'
      : 'Fix what the server says above (docs/team.md), then run the same command again.';
  return new CliError(
    `${where} refused a statement (${code}: ${reasonOf(url, error)}); no paid call was started after it.`,
    ExitCode.service,
    `${hint} What was paid is kept: answers that could not be stored wait in the local spool.`,
  );
}

/** The first line of what went wrong, never with the password (a server or a proxy may echo it). */
function reasonOf(url: StateUrl, error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return withoutPassword(redact(text.split('\n')[0]!, url.password)).slice(0, 160);
}

/** Missing privileges and the like: exit 2 with the fix. */
function privilegeOrSchemaFailure(url: StateUrl, error: unknown): CliError | undefined {
  const code = (error as { code?: string }).code;
  if (code === '42501')
    return new UsageError(
      `the role ${url.user} lacks a privilege on the state database ${url.shown} (${reasonOf(url, error)}).`,
      'Grant it what docs/team.md lists: CREATE on the database (or an existing schema "prospect" it owns).',
    );
  return undefined;
}

/** Why a connection could not be made: unreachable is exit 5; credentials, TLS, a missing database exit 2. */
function connectFailure(url: StateUrl, error: unknown): CliError {
  if (error instanceof CliError) return error;
  const code = (error as { code?: string }).code;
  const reason = reasonOf(url, error);
  if (code === '28P01' || (code === '28000' && !/no encryption/.test(reason)))
    return new UsageError(
      `the state database ${url.shown} refused the role ${url.user}: ${reason}.`,
      'Check the role and password in PROSPECT_STATE_URL or `prospect config set state-url` (docs/team.md).',
    );
  if (code === '3D000')
    return new UsageError(
      `the state database ${url.shown} does not exist: ${reason}.`,
      'Create it (createdb) or fix the database name in the state URL.',
    );
  return tlsFailure(url, error, reason) ?? unreachable(url, reason);
}

/** A TLS refusal, either way round: exit 2, since the fix is a setting (the URL's or the server's). */
function tlsFailure(url: StateUrl, error: unknown, reason: string): CliError | undefined {
  const where = `the state database at ${whereOf(url)}`;
  if (/does not support SSL/i.test(reason))
    return new UsageError(
      `${where} does not offer TLS, and sslmode=${url.sslmode} asks for it.`,
      'Turn ssl on in its postgresql.conf; on a network you trust, write sslmode=disable in the state URL instead.',
    );
  if (/no encryption/.test(reason))
    return new UsageError(
      `${where} accepts this role only over TLS, and the state URL asks for none (sslmode=${url.sslmode}).`,
      'Write sslmode=verify-full (with sslrootcert=/path/ca.pem for a private CA) in the state URL.',
    );
  const tlsCode = String((error as { code?: string }).code ?? '');
  if (!/CERT|SELF_SIGNED|ISSUER|ALTNAME|TLS|SSL/.test(tlsCode) && !/certificate|altname|SSL|TLS/i.test(reason))
    return undefined;
  const nameProblem = /ALTNAME|altname/.test(tlsCode + reason);
  return new UsageError(
    `${where} failed the TLS check (sslmode=${url.sslmode}): ${reason}.`,
    nameProblem
      ? `Use the host name its certificate names, or sslmode=verify-ca to check only the CA.`
      : url.sslrootcert === undefined
        ? 'Give the CA that signed its certificate: sslrootcert=/path/ca.pem in the state URL.'
        : `Check that ${url.sslrootcert} is the CA that signed its certificate.`,
  );
}

function unreachable(url: StateUrl, reason: string): CliError {
  return new CliError(
    `cannot reach the state database ${url.shown} (${reason}); nothing was sent to the service.`,
    ExitCode.service,
    'Check that the database is up and reachable from here, then run the same command again.',
  );
}
