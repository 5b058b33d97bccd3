/**
 * One connection to the team database per process, used by the verification ledger and a pipeline
 * job alike: the job's session advisory lock and the claims' holder are this connection, so a
 * process that dies frees both at once. Its calls go one at a time (`exclusive`): a transaction
 * never takes in another task's statement. A lost connection ends every later call with exit 5,
 * so no paid call follows the loss.
 */
import pg from 'pg';
import { CliError, ExitCode, UsageError } from '../../../exit-codes.js';
import { tlsOptions, type StateUrl } from '../../../config/state-url.js';

/** Server-side keepalives and TCP_USER_TIMEOUT: a holder cut off by the network is dropped within about a minute. */
const SERVER_TCP_SETTINGS =
  '-c tcp_keepalives_idle=15 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=6 -c tcp_user_timeout=60000';
const CONNECT_TIMEOUT_MS = 10_000;
/** A statement that does not answer in this time is a lost session (a partition the kernel has not noticed). */
const QUERY_TIMEOUT_MS = 90_000;

export type Query = (text: string, values?: unknown[]) => Promise<pg.QueryResult>;

export class PgSession {
  private queue: Promise<unknown> = Promise.resolve();
  private lost: Error | undefined;

  private constructor(
    private readonly client: pg.Client,
    readonly url: StateUrl,
    readonly backendPid: number,
  ) {
    client.on('error', (error) => {
      this.lost ??= error;
    });
    client.on('end', () => {
      this.lost ??= new Error('the connection was closed');
    });
  }

  static async connect(url: StateUrl, applicationName: string): Promise<PgSession> {
    const client = new pg.Client({
      host: url.host,
      port: url.port,
      user: url.user,
      password: url.password,
      database: url.database,
      ssl: tlsOptions(url),
      keepAlive: true,
      keepAliveInitialDelayMillis: 15_000,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      application_name: applicationName,
      options: SERVER_TCP_SETTINGS,
    });
    // Until connect settles, a failure is connect's to report.
    client.on('error', () => {});
    try {
      await client.connect();
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      return new PgSession(client, url, rows[0]!.pid);
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
        throw this.failure(error);
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
    if (this.lost) throw sessionLost(this.url, this.lost);
  }

  async close(): Promise<void> {
    this.lost ??= new Error('closed');
    await this.client.end().catch(() => {});
  }

  /** What a failed statement means for the run. */
  private failure(error: unknown): unknown {
    if (error instanceof CliError) return error;
    const code = (error as { code?: string }).code;
    if (
      this.lost ||
      code === undefined ||
      /^(08|57P)/.test(code) ||
      /timeout|terminated|ECONN|EPIPE/i.test(String(error))
    )
      return sessionLost(this.url, this.lost ?? (error as Error));
    return privilegeOrSchemaFailure(this.url, error) ?? error;
  }
}

function sessionLost(url: StateUrl, cause: Error): CliError {
  return new CliError(
    `lost the connection to the state database ${url.shown} (${reasonOf(cause)}); no paid call was made after it.`,
    ExitCode.service,
    'Run the same command again once the database is reachable: what was paid and committed is kept.',
  );
}

function reasonOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0]!.slice(0, 160);
}

/** Missing privileges and the like: exit 2 with the fix. */
function privilegeOrSchemaFailure(url: StateUrl, error: unknown): CliError | undefined {
  const code = (error as { code?: string }).code;
  if (code === '42501')
    return new UsageError(
      `the role ${url.user} lacks a privilege on the state database ${url.shown} (${reasonOf(error)}).`,
      'Grant it what docs/team.md lists: CREATE on the database (or an existing schema "prospect" it owns).',
    );
  return undefined;
}

/** Why a connection could not be made: unreachable is exit 5, refused credentials or a missing database exit 2. */
function connectFailure(url: StateUrl, error: unknown): CliError {
  const code = (error as { code?: string }).code;
  const reason = reasonOf(error);
  if (code === '28P01' || code === '28000')
    return new UsageError(
      `the state database ${url.shown} refused the role ${url.user}: ${reason}.`,
      'Check the role and password in PROSPECT_STATE_URL or `prospect config set state-url` (docs/team.md).',
    );
  if (code === '3D000')
    return new UsageError(
      `the state database ${url.shown} does not exist: ${reason}.`,
      'Create it (createdb) or fix the database name in the state URL.',
    );
  if (/self.signed|certificate|altname|SSL|TLS/i.test(reason))
    return new UsageError(
      `the state database ${url.shown} failed the TLS check (sslmode=${url.sslmode}): ${reason}.`,
      'Give its CA with sslrootcert=/path/ca.pem, or fix the host name; sslmode=disable only on a trusted network.',
    );
  return new CliError(
    `cannot reach the state database ${url.shown} (${reason}); nothing was sent to the service.`,
    ExitCode.service,
    'Check that the database is up and reachable from here, then run the same command again.',
  );
}
