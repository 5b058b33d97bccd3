/**
 * `prospect doctor`'s check of the state store: local, or the team database reached, over TLS or
 * not, with a server session of its own (no transaction-mode pooler), with the privileges a run
 * needs and a schema this prospect can use. It changes nothing (no migration): a run does that.
 */
import { parseStateUrl } from '../../config/state-url.js';
import { CliError, UsageError } from '../../exit-codes.js';
import type { RunContext } from '../../runtime/context.js';
import { hostName, stateUrlSetting, teamKeySetting } from './index.js';

/**
 * How the connection keeps its server session, which a job's lock and the claims need (./pg/pooler.ts);
 * any other path is refused.
 */
const SESSION_PATHS = {
  direct: 'its own: the server sees this connection itself (no pooler)',
  kept: 'its own: something relays the connection (a session-mode pool, a proxy) and keeps its server session',
} as const;

/** Whether the team key is the one that wrote the database (a different one is refused, exit 2). */
async function teamKeyState(
  session: { query(text: string): Promise<{ rows: unknown[] }> },
  check: Buffer,
  version: number | undefined,
): Promise<string> {
  const { SCHEMA } = await import('./pg/schema.js');
  if (version === undefined || version < 3) return 'the next run records which key writes the database';
  const { rows } = await session.query(`SELECT team_key_check FROM ${SCHEMA}.meta`);
  const found = (rows[0] as { team_key_check: Buffer | null } | undefined)?.team_key_check;
  if (found === null || found === undefined) return 'the next run records which key writes the database';
  if (found.equals(check)) return 'the one the database was written with';
  throw new UsageError(
    'the team key on this machine is not the one the state database was written with.',
    'Set the key the other machines of the team use (PROSPECT_TEAM_KEY or `prospect config set team-key`).',
  );
}

export async function checkStateStore(ctx: RunContext, out: { line(text: string): void }): Promise<void> {
  const text = await stateUrlSetting(ctx.env);
  // No state URL: the local store, which the service checks do not need; nothing to say.
  if (text === undefined) return;
  const url = parseStateUrl(text);
  out.line(`state     ${url.shown} (sslmode=${url.sslmode})`);
  const teamKey = await teamKeySetting(ctx.env);
  const [{ PgSession }, { SCHEMA, SCHEMA_VERSION, versionOf }, { TeamKeys }] = await Promise.all([
    import('./pg/session.js'),
    import('./pg/schema.js'),
    import('./pg/team-key.js'),
  ]);
  const started = performance.now();
  const session = await PgSession.connect(url, `prospect doctor ${hostName(ctx.env)}`.slice(0, 63)).catch(
    (error: unknown) => {
      // A refusal with its fix (TLS, credentials, a transaction pooler) is also said in the report.
      if (error instanceof CliError) out.line(`FAIL connect   ${error.message}`);
      throw error;
    },
  );
  try {
    const ms = Math.round(performance.now() - started);
    const { rows } = await session.query(
      `SELECT current_user AS role, pg_catalog.split_part(pg_catalog.version(), ' ', 2) AS version,
              (SELECT ssl FROM pg_catalog.pg_stat_ssl WHERE pid = pg_catalog.pg_backend_pid()) AS ssl,
              (SELECT version FROM pg_catalog.pg_stat_ssl WHERE pid = pg_catalog.pg_backend_pid()) AS tls,
              pg_catalog.has_database_privilege(pg_catalog.current_database(), 'CREATE') AS create_db,
              (SELECT pg_catalog.has_schema_privilege(oid, 'CREATE') FROM pg_catalog.pg_namespace
                WHERE nspname = $1) AS create_schema`,
      [SCHEMA],
    );
    const found = rows[0] as { role: string; version: string; ssl: boolean; tls: string | null };
    out.line(`ok  connect   PostgreSQL ${found.version} as ${found.role} (${ms} ms)`);
    out.line(
      found.ssl ? `ok  TLS       ${found.tls}` : 'ok  TLS       none: plaintext (this machine, or sslmode=disable)',
    );
    out.line(`ok  session   ${SESSION_PATHS[session.path]}`);
    const { create_db: createDb, create_schema: createSchema } = rows[0] as {
      create_db: boolean;
      create_schema: boolean | null;
    };
    if (!(createSchema ?? createDb))
      throw new UsageError(
        `the role ${url.user} may not create prospect's tables in ${url.shown}.`,
        `GRANT CREATE ON DATABASE to it, or create the schema "${SCHEMA}" owned by it (docs/team.md).`,
      );
    out.line(`ok  privs     ${createSchema === null ? 'may create the schema' : `may write schema ${SCHEMA}`}`);
    const version = await session.exclusive((query) => versionOf(query));
    if (version !== undefined && version > SCHEMA_VERSION)
      throw new UsageError(
        `the state database was written by a newer prospect (schema ${version}; this one knows ${SCHEMA_VERSION}).`,
        'Upgrade prospect on this machine to the version the rest of the team runs.',
      );
    out.line(
      version === undefined
        ? `ok  schema    none yet: the first run creates schema ${SCHEMA} (version ${SCHEMA_VERSION})`
        : `ok  schema    ${SCHEMA} version ${version}` +
            (version < SCHEMA_VERSION ? ` (the next run upgrades it to ${SCHEMA_VERSION})` : ''),
    );
    out.line(`ok  team key  ${await teamKeyState(session, TeamKeys.from(teamKey).check, version)}`);
  } finally {
    await session.close();
  }
}
