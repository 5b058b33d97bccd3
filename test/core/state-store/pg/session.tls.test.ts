/**
 * Every sslmode prospect accepts, against the real server of test/helpers/postgres.ts, which serves
 * TLS with a certificate for localhost and 127.0.0.1 from a CA the run made with openssl (and also
 * listens on 127.0.0.2, an address of this machine its certificate does not name). Whether a session
 * is encrypted is read from the server's pg_stat_ssl, never from what prospect says. In process: the
 * store a run opens; the exit code and stderr through main() in process (runInProcess).
 */
import { execFileSync } from 'node:child_process';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseStateUrl } from '../../../../src/config/state-url.js';
import { PgSession } from '../../../../src/core/state-store/pg/session.js';
import { openPgStore } from '../../../../src/core/state-store/pg/store.js';
import { CliError, ExitCode } from '../../../../src/exit-codes.js';
import { runInProcess } from '../../../helpers/cli.js';
import { POSTGRES, testCluster, testDatabase, type TestDatabase, TEST_TEAM_KEY } from '../../../helpers/postgres.js';
import { OPENSSL } from '../../../helpers/real-servers.js';
import { scratchDir } from '../../../helpers/scratch.js';
import { startScriptedServer } from '../../../helpers/scripted-server.js';

let db: TestDatabase;
let ca: string;
/** A CA of its own that signed nothing the server has. */
let otherCa: string;
let socketDir: string;

/** A name this machine answers with 127.0.0.1 (as a line in /etc/hosts would) that the certificate does not have. */
const OTHER_NAME = 'db.prospect.test';

beforeAll(async () => {
  if (POSTGRES.skip) return;
  process.env.PROSPECT_TEST_HOSTS = `${OTHER_NAME}=127.0.0.1`;
  await import(new URL('../../../helpers/hosts-preload.mjs', import.meta.url).href);
  db = await testDatabase('tls');
  ({ ca, socketDir } = await testCluster());
  const dir = await scratchDir();
  otherCa = join(dir, 'other-ca.pem');
  execFileSync(
    OPENSSL.command,
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2'],
      ...['-keyout', join(dir, 'other-ca.key'), '-out', otherCa, '-subj', '/CN=another CA'],
    ],
    { stdio: 'pipe' },
  );
});

/** The file's role on `host`, with the query parameters given. */
const urlFor = (host: string, query = '') =>
  `postgresql://${db.role}:${db.password}@${host}:${db.port}/${db.name}${query === '' ? '' : `?${query}`}`;

/** What the server says of the TLS of a session prospect opened (found by its application name). */
async function serverSideTls(url: string): Promise<{ ssl: boolean; version: string | null }> {
  const host = `tls-${Math.random().toString(36).slice(2, 10)}`;
  const store = await openPgStore(parseStateUrl(url), host, TEST_TEAM_KEY);
  try {
    const { rows } = await db.sql(
      `SELECT s.ssl, s.version FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
        WHERE a.application_name = $1`,
      [`prospect ${host}`],
    );
    expect(rows).toHaveLength(1);
    return rows[0] as { ssl: boolean; version: string | null };
  } finally {
    await store.close();
  }
}

/** The refusal opening the store ends with, checked for what every refusal must be. */
async function refusal(url: string): Promise<CliError> {
  const error = await openPgStore(parseStateUrl(url), 'tls-refused', TEST_TEAM_KEY).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(CliError);
  const { message, hint } = error as CliError;
  expect(`${message}\n${hint ?? ''}`).not.toContain(db.password);
  expect(message).not.toContain('\n');
  expect(hint ?? '').not.toContain('\n');
  return error as CliError;
}

const warnings: string[] = [];
const onWarning = (warning: Error) => warnings.push(warning.message);
beforeAll(() => {
  process.on('warning', onWarning);
});
afterAll(() => {
  process.off('warning', onWarning);
  // An IP address given to Node as the TLS server name is warned about on stderr (DEP0123).
  expect(warnings).toEqual([]);
});

describe.skipIf(POSTGRES.skip)('sslmode against a server that serves TLS', () => {
  it('disable, and no sslmode on loopback (127.0.0.1, localhost): plaintext', async () => {
    expect(await serverSideTls(urlFor('127.0.0.1', 'sslmode=disable'))).toEqual({ ssl: false, version: null });
    expect(await serverSideTls(urlFor('127.0.0.1'))).toEqual({ ssl: false, version: null });
    expect(await serverSideTls(urlFor('localhost'))).toEqual({ ssl: false, version: null });
  });

  it('require, prefer and allow: encrypted without checking the CA or the name', async () => {
    // Node's CAs do not include the run's own CA, and 127.0.0.2 is not in the certificate.
    for (const mode of ['require', 'prefer', 'allow'])
      for (const host of ['127.0.0.1', '127.0.0.2'])
        expect(await serverSideTls(urlFor(host, `sslmode=${mode}`))).toEqual({ ssl: true, version: 'TLSv1.3' });
  });

  it('require with sslrootcert checks the CA (as libpq does)', async () => {
    expect(await serverSideTls(urlFor('127.0.0.1', `sslmode=require&sslrootcert=${ca}`))).toMatchObject({ ssl: true });
    const wrong = await refusal(urlFor('127.0.0.1', `sslmode=require&sslrootcert=${otherCa}`));
    expect(wrong.exitCode).toBe(ExitCode.usage);
  });

  it('verify-ca: the right CA works whatever the name; another CA is refused, naming host:port and the fix', async () => {
    for (const host of ['127.0.0.1', '127.0.0.2', OTHER_NAME])
      expect(await serverSideTls(urlFor(host, `sslmode=verify-ca&sslrootcert=${ca}`))).toMatchObject({ ssl: true });
    const wrong = await refusal(urlFor('127.0.0.1', `sslmode=verify-ca&sslrootcert=${otherCa}`));
    expect(wrong.exitCode).toBe(ExitCode.usage);
    expect(wrong.message).toMatch(
      new RegExp(`^the state database at 127\\.0\\.0\\.1:${db.port} failed the TLS check \\(sslmode=verify-ca\\): `),
    );
    expect(wrong.hint).toBe(`Check that ${otherCa} is the CA that signed its certificate.`);
    // Without sslrootcert, Node's CAs: the run's CA is not among them.
    const unknown = await refusal(urlFor('127.0.0.1', 'sslmode=verify-ca'));
    expect(unknown.exitCode).toBe(ExitCode.usage);
    expect(unknown.hint).toMatch(/sslrootcert=\/path\/ca\.pem/);
  });

  it('verify-full: the CA and the name; a name the certificate does not have is refused', async () => {
    for (const host of ['127.0.0.1', 'localhost'])
      expect(await serverSideTls(urlFor(host, `sslmode=verify-full&sslrootcert=${ca}`))).toEqual({
        ssl: true,
        version: 'TLSv1.3',
      });
    // Over TLS too, the server sees this process's own socket: no pooler check needed (./pooler.test.ts).
    const session = await PgSession.connect(
      parseStateUrl(urlFor('localhost', `sslmode=verify-full&sslrootcert=${ca}`)),
      't',
    );
    expect(session.path).toBe('direct');
    await session.close();
    const otherName = await refusal(urlFor(OTHER_NAME, `sslmode=verify-full&sslrootcert=${ca}`));
    expect(otherName.exitCode).toBe(ExitCode.usage);
    expect(otherName.message).toMatch(
      new RegExp(
        `^the state database at ${OTHER_NAME}:${db.port} failed the TLS check \\(sslmode=verify-full\\): .*${OTHER_NAME}`,
      ),
    );
    expect(otherName.hint).toMatch(/host name its certificate names/);
    const wrongName = await refusal(urlFor('127.0.0.2', `sslmode=verify-full&sslrootcert=${ca}`));
    expect(wrongName.exitCode).toBe(ExitCode.usage);
    expect(wrongName.message).toMatch(
      new RegExp(
        `^the state database at 127\\.0\\.0\\.2:${db.port} failed the TLS check \\(sslmode=verify-full\\): .*127\\.0\\.0\\.2`,
      ),
    );
    expect(wrongName.hint).toMatch(/host name its certificate names/);
    const wrongCa = await refusal(urlFor('localhost', `sslmode=verify-full&sslrootcert=${otherCa}`));
    expect(wrongCa.exitCode).toBe(ExitCode.usage);
  });

  it('a server that offers no TLS (PostgreSQL on its Unix socket) and sslmode=require: exit 2, said plainly', async () => {
    const noTls = await refusal(
      `postgresql://${db.role}:${db.password}@/${db.name}?host=${socketDir}&port=${db.port}&sslmode=require`,
    );
    expect(noTls.exitCode).toBe(ExitCode.usage);
    expect(noTls.message).toBe(
      `the state database at ${socketDir}:${db.port} does not offer TLS, and sslmode=require asks for it.`,
    );
  });
});

describe.skipIf(POSTGRES.skip)('a server that takes a role only over TLS', () => {
  it('and no sslmode on loopback: exit 2 saying to ask for TLS, not blaming the password', async () => {
    const { dir } = await testCluster();
    // A hostssl-only rule for this file's role alone, ahead of the others (read on reload only).
    const hba = join(dir, 'data', 'pg_hba.conf');
    const before = await readFile(hba, 'utf8');
    const install = async (text: string) => {
      await writeFile(`${hba}.new`, text);
      await rename(`${hba}.new`, hba);
      await db.sql('SELECT pg_reload_conf()');
    };
    await install(`hostnossl all ${db.role} 127.0.0.1/32 reject\n${before}`);
    try {
      const plain = await refusal(urlFor('127.0.0.1'));
      expect(plain.exitCode).toBe(ExitCode.usage);
      expect(plain.message).toBe(
        `the state database at 127.0.0.1:${db.port} accepts this role only over TLS, and the state URL asks for ` +
          'none (sslmode=disable).',
      );
      expect(plain.hint).toMatch(/^Write sslmode=verify-full/);
      expect(await serverSideTls(urlFor('127.0.0.1', `sslmode=verify-full&sslrootcert=${ca}`))).toMatchObject({
        ssl: true,
      });
    } finally {
      // The file's other tests (in any order: --sequence.shuffle) take this role in plaintext.
      await install(before);
    }
  });
});

describe.skipIf(POSTGRES.skip)('through main()', () => {
  it('verify with the wrong CA: exit 2 before any call to the service, two lines, no password', async () => {
    // The service is a recorder: any request prospect sent would be in its list.
    const service = await startScriptedServer([{ status: 500 }]);
    const home = await scratchDir();
    const run = await runInProcess(['verify', 'ana@example.com', '--yes'], {
      url: service.url,
      apiKey: 'pk_test_tls_0000000000',
      cwd: home,
      env: {
        HOME: home,
        PROSPECT_TEAM_KEY: TEST_TEAM_KEY,
        PROSPECT_STATE_URL: urlFor('127.0.0.1', `sslmode=verify-full&sslrootcert=${otherCa}`),
      },
    });
    await service.close();
    expect(run.code, run.stderr).toBe(ExitCode.usage);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines.length, run.stderr).toBeLessThanOrEqual(2);
    expect(lines[0]).toContain(`127.0.0.1:${db.port} failed the TLS check`);
    expect(run.stderr).not.toContain(db.password);
    expect(service.requests).toEqual([]);
  });
});
