/**
 * Another role's code is never run by prospect. A role with CREATE on `public` (the default before
 * PostgreSQL 15, kept by pg_upgrade) defines functions and operators there that shadow the built-ins
 * prospect's SQL uses, each a better match for an untyped parameter than the built-in, as an attacker
 * would: each records that it ran and grants prospect's tables to its owner, then does what the
 * built-in does. A verify run, a pipeline run (lock, pages, --only-new, the end of the run), the
 * migration and doctor go through prospect (main() in process, against an in-process sandbox): the
 * attacker's table stays empty and it is granted nothing. A plain client with the default search_path
 * shows the trap is live.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseStateUrl } from '../../../../src/config/state-url.js';
import { PgSession } from '../../../../src/core/state-store/pg/session.js';
import { runInProcess } from '../../../helpers/cli.js';
import { POSTGRES, TEST_TEAM_KEY, testDatabase, type TestDatabase } from '../../../helpers/postgres.js';
import { SANDBOX_KEYS, startTestSandbox, todayUtc, type TestSandbox } from '../../../helpers/sandbox.js';
import { scratchDir } from '../../../helpers/scratch.js';

let db: TestDatabase;
let attacker: string;
let sandbox: TestSandbox;

/** A function in `public` that records its call, grants prospect's tables to the attacker, then returns `body`. */
function trap(signature: string, returns: string, body: string): string {
  const name = signature.slice(0, signature.indexOf('('));
  return `CREATE FUNCTION public.${signature} RETURNS ${returns} LANGUAGE plpgsql AS $fn$
    BEGIN
      INSERT INTO public.calls VALUES ('${name}', current_user);
      BEGIN
        EXECUTE 'GRANT USAGE ON SCHEMA prospect TO ${attacker}';
        EXECUTE 'GRANT SELECT ON ALL TABLES IN SCHEMA prospect TO ${attacker}';
      EXCEPTION WHEN OTHERS THEN NULL;
      END;
      ${body}
    END $fn$`;
}

beforeAll(async () => {
  if (POSTGRES.skip) return;
  db = await testDatabase('searchpath');
  attacker = `${db.name}_attacker`;
  sandbox = await startTestSandbox({ asOf: todayUtc() });
  const statements = [
    `CREATE ROLE ${attacker}`,
    // As before PostgreSQL 15: anyone may create in public.
    'GRANT CREATE, USAGE ON SCHEMA public TO PUBLIC',
    `SET ROLE ${attacker}`,
    'CREATE TABLE public.calls (fn text, by_role text)',
    'GRANT INSERT ON public.calls TO PUBLIC',
    trap('make_interval(secs text)', 'interval', 'RETURN pg_catalog.make_interval(secs => secs::float8);'),
    trap('pg_try_advisory_lock(k text, h integer)', 'boolean', 'RETURN pg_catalog.pg_try_advisory_lock(k::int, h);'),
    trap('pg_advisory_unlock(k text, h integer)', 'boolean', 'RETURN pg_catalog.pg_advisory_unlock(k::int, h);'),
    trap('pg_advisory_xact_lock(k text)', 'void', 'PERFORM pg_catalog.pg_advisory_xact_lock(k::bigint);'),
    trap('unnest(a bytea[])', 'SETOF bytea', 'RETURN QUERY SELECT pg_catalog.unnest(a);'),
    trap('has_database_privilege(d name, p text)', 'boolean', 'RETURN pg_catalog.has_database_privilege(d::text, p);'),
    trap('hashtext(t varchar)', 'integer', 'RETURN pg_catalog.hashtext(t::text);'),
    trap('now()', 'timestamptz', 'RETURN pg_catalog.now();'),
    trap('pg_backend_pid()', 'integer', 'RETURN pg_catalog.pg_backend_pid();'),
    trap('set_config(a text, b text, c boolean)', 'text', 'RETURN pg_catalog.set_config(a, b, c);'),
    // Operators an untyped parameter could be matched to, beside the built-in ones.
    trap('bytea_eq_text(a bytea, b text)', 'boolean', 'RETURN a = b::bytea;'),
    'CREATE OPERATOR public.= (leftarg = bytea, rightarg = text, function = public.bytea_eq_text)',
    trap('text_eq_varchar(a text, b varchar)', 'boolean', 'RETURN a = b::text;'),
    'CREATE OPERATOR public.= (leftarg = text, rightarg = varchar, function = public.text_eq_varchar)',
    trap('jsonb_field(a jsonb, b varchar)', 'text', 'RETURN a ->> b::text;'),
    'CREATE OPERATOR public.->> (leftarg = jsonb, rightarg = varchar, function = public.jsonb_field)',
    'RESET ROLE',
  ];
  for (const statement of statements) await db.sql(statement);
});
afterAll(async () => {
  await sandbox?.close();
});

async function calls(): Promise<string[]> {
  return (await db.sql('SELECT fn FROM public.calls')).rows.map((row: { fn: string }) => row.fn);
}

const run = async (args: string[]) => {
  const home = await scratchDir();
  return runInProcess(args, {
    url: sandbox.url,
    apiKey: SANDBOX_KEYS.growth,
    cwd: home,
    env: { HOME: home, HOSTNAME: 'search-path-host', PROSPECT_STATE_URL: db.url, PROSPECT_TEAM_KEY: TEST_TEAM_KEY },
  });
};

describe.skipIf(POSTGRES.skip)('a function in public that shadows a built-in', () => {
  it('is called by a client with the default search_path and unqualified calls (the trap is live)', async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query('SELECT now() + make_interval(secs => $1)', [60]);
    } finally {
      await client.end();
    }
    expect(await calls()).toEqual(['make_interval']);
    await db.sql('DELETE FROM public.calls');
  });

  it("prospect's session searches its schema, the catalog and pg_temp, never public", async () => {
    const session = await PgSession.connect(parseStateUrl(db.url), 'search-path-check');
    try {
      const { rows } = await session.query('SHOW search_path');
      expect(rows).toEqual([{ search_path: 'prospect, pg_catalog, pg_temp' }]);
    } finally {
      await session.close();
    }
  });

  it(
    'is never called by prospect: migration, verify, pipeline with --only-new, doctor',
    { timeout: 60_000 },
    async () => {
      const verify = await run(['verify', 'ana@example.com', 'bob@example.org', '--yes']);
      expect(verify.code, verify.stderr).toBe(0);
      const pipeline = ['--page-size', '20', 'pipeline', '-t', 'jQuery', '--country', 'us', '--seniority', 'cxo'];
      const job = await run([
        ...pipeline,
        '--max',
        '30',
        '--stale',
        'verify',
        '--yes',
        '--only-new',
        '--state',
        'pg:w',
      ]);
      expect(job.code, job.stderr).toBe(0);
      expect(job.stdout).not.toBe('');
      const doctor = await run(['doctor']);
      expect(doctor.stdout).toMatch(/^ok {2}privs /m);
      // The runs did reach the store: the schema, paid results, a recorded run with its leads.
      const stored = await db.sql(
        `SELECT (SELECT count(*)::int FROM prospect.verifications) AS paid,
              (SELECT count(*)::int FROM prospect.runs) AS runs,
              (SELECT count(*)::int FROM prospect.exported) AS leads`,
      );
      expect(stored.rows[0].paid).toBeGreaterThanOrEqual(2);
      expect(stored.rows[0].runs).toBe(1);
      expect(stored.rows[0].leads).toBeGreaterThan(0);
      expect(await calls()).toEqual([]);
      const granted = await db.sql(
        `SELECT pg_catalog.has_schema_privilege($1, 'prospect', 'USAGE') AS usage,
              (SELECT count(*)::int FROM information_schema.role_table_grants WHERE grantee = $1) AS tables`,
        [attacker],
      );
      expect(granted.rows).toEqual([{ usage: false, tables: 0 }]);
    },
  );
});
