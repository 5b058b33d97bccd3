/**
 * `prospect config` and the config file as a user meets them, each run with its own
 * PROSPECT_CONFIG_DIR. Spawned (the built binary; needs `npm run build` first): the file's mode under
 * umask 000, which only a process has. Everything else is the bytes and files main() writes, so it runs
 * the same main() in process (runInProcess: the same environment, exit code and key-leak checks,
 * without a process start).
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  runCli,
  runInProcess,
  runShell,
  scratchDir,
  type CliOptions,
  type CliRun,
  type InProcessOptions,
} from '../helpers/cli.js';
import { csvRecords } from '../helpers/csv.js';
import {
  companiesPage,
  errorBody,
  sampleContact,
  startScriptedServer,
  type ScriptedServer,
} from '../helpers/scripted-server.js';

const FILE_KEY = 'sk_live_config_file_key_f00d';
const ENV_KEY = 'sk_live_environment_key_beef';

interface Profile {
  dir: string;
  file: string;
  /** The binary, spawned. */
  run(args: string[], options?: CliOptions): Promise<CliRun>;
  /** The same in process: for set-up steps and table rows, not for what the test is about. */
  inProcess(args: string[], options?: InProcessOptions): Promise<CliRun>;
}

/** A fresh config directory and runners bound to it. */
async function profile(): Promise<Profile> {
  const dir = await scratchDir('prospect-config-');
  const run = (args: string[], options: CliOptions = {}) =>
    runCli(args, { ...options, env: { PROSPECT_CONFIG_DIR: dir, ...options.env } });
  const inProcess = (args: string[], options: InProcessOptions = {}) =>
    runInProcess(args, { ...options, env: { PROSPECT_CONFIG_DIR: dir, ...options.env } });
  return { dir, file: join(dir, 'config.json'), run, inProcess };
}

/** A set-up step that must work for the test to mean anything. */
async function setUp(runner: Profile['inProcess'], args: string[], options: InProcessOptions = {}): Promise<void> {
  const result = await runner(args, options);
  expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
}

/** The built CLI under a given umask, through a shell as a user would start it. */
async function runUnderUmask(
  umask: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  input = '',
): Promise<number | null> {
  const quoted = args.map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`).join(' ');
  return (await runShell(`umask ${umask}; eval "$PROSPECT ${quoted}"`, { env, input })).code;
}

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('the config file is private', () => {
  // Umask 000 clears no bit, so the mode seen is exactly the one prospect asks for; any other umask only
  // clears bits from it, so 0600 here is 0600 under 022 or 002 too (the common umasks add nothing).
  it.each(['000'])('is written with mode 0600 under umask %s', async (umask) => {
    const { dir, file } = await profile();
    expect(await runUnderUmask(umask, ['config', 'set', 'max-age', '6m'], { PROSPECT_CONFIG_DIR: dir })).toBe(0);
    expect(modeOf(file)).toBe(0o600);
    expect(
      await runUnderUmask(umask, ['config', 'set', 'api-key'], { PROSPECT_CONFIG_DIR: dir }, `${FILE_KEY}\n`),
    ).toBe(0);
    expect(modeOf(file)).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ 'max-age': '6m', 'api-key': FILE_KEY });
  });

  it('a file that was readable by others is made private on the next write', async () => {
    const { file, inProcess } = await profile();
    writeFileSync(file, '{"format": "csv"}', { mode: 0o644 });
    // In process: the mode is the write's, not the process's (the spawned runs above show the umask's part).
    expect((await inProcess(['config', 'set', 'concurrency', '8'])).code).toBe(0);
    expect(modeOf(file)).toBe(0o600);
  });
});

describe('config set api-key', () => {
  it('reads the key from stdin and never shows it', async () => {
    const { file, inProcess } = await profile();
    // In process (the umask test above spawns `config set api-key` reading a real stdin). apiKey makes
    // runInProcess check that the key appears in no output; PROSPECT_API_KEY itself stays unset.
    const set = await inProcess(['--verbose', 'config', 'set', 'api-key'], {
      apiKey: FILE_KEY,
      env: { PROSPECT_API_KEY: undefined },
      input: `${FILE_KEY}\n`,
    });
    expect(set.code).toBe(0);
    expect(set.stdout).toBe('');
    expect(set.stderr).toContain('Set api-key to …f00d in');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ 'api-key': FILE_KEY });

    // Reading it back (the same leak checks).
    const get = await inProcess(['config', 'get', 'api-key'], {
      apiKey: FILE_KEY,
      env: { PROSPECT_API_KEY: undefined },
    });
    expect(get).toMatchObject({ code: 0, stdout: '…f00d\n' });

    const list = await inProcess(['config', 'list'], { apiKey: FILE_KEY, env: { PROSPECT_API_KEY: undefined } });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^api-key +…f00d +config file$/m);
  });

  it('refuses the key as an argument (exit 2), explains why, and does not repeat it', async () => {
    // In process: the same main(), exit code and stderr; the umask case above is this file's spawned one.
    const { file, inProcess } = await profile();
    const refused = await inProcess(['config', 'set', 'api-key', FILE_KEY], {
      apiKey: FILE_KEY,
      env: { PROSPECT_API_KEY: undefined },
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('refusing to take api-key from the command line');
    expect(refused.stderr).toContain('shell history');
    expect(refused.stderr).toContain('prospect config set api-key');
    expect(existsSync(file)).toBe(false);
  });

  it('refuses an empty stdin (exit 2) and stores nothing', async () => {
    // An empty stdin is the run's own.
    const { file, inProcess } = await profile();
    const empty = await inProcess(['config', 'set', 'api-key'], { input: '' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('no API key on stdin');
    expect(existsSync(file)).toBe(false);
  });

  it('warns (with --verbose) that PROSPECT_API_KEY will take precedence', async () => {
    const { inProcess } = await profile();
    const set = await inProcess(['-v', 'config', 'set', 'api-key'], { apiKey: ENV_KEY, input: FILE_KEY });
    expect(set.code).toBe(0);
    expect(set.stderr).toContain(
      'PROSPECT_API_KEY is set in this environment and takes precedence over the config file',
    );
  });
});

describe('config list, get, unset, path', () => {
  it('list shows the value in effect and where it comes from, keys redacted', async () => {
    const { inProcess } = await profile();
    await setUp(inProcess, ['config', 'set', 'api-key'], { input: FILE_KEY });
    await setUp(inProcess, ['config', 'set', 'max-age', '6m']);
    const list = await inProcess(['config', 'list'], {
      apiKey: ENV_KEY,
      env: { PROSPECT_BASE_URL: 'https://env.example.com' },
    });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^api-key +…beef +environment PROSPECT_API_KEY$/m);
    expect(list.stdout).toMatch(/^base-url +https:\/\/env\.example\.com +environment PROSPECT_BASE_URL$/m);
    expect(list.stdout).toMatch(/^max-age +6m +config file$/m);
    expect(list.stdout).toMatch(/^concurrency +4 +default$/m);
    expect(list.stdout).toMatch(/^format +table on a terminal, csv otherwise +default$/m);
    expect(list.stdout).not.toContain(FILE_KEY);

    const flagged = await inProcess(['--base-url', 'https://flag.example.com', 'config', 'list']);
    expect(flagged.stdout).toMatch(/^base-url +https:\/\/flag\.example\.com +flag --base-url$/m);
  });

  it('state-url: set as written, listed with its password as ***, from the file or PROSPECT_STATE_URL', async () => {
    const { inProcess, file } = await profile();
    const url = 'postgresql://team:Hunter2-state@db.example.com/sales?sslmode=verify-full';
    await setUp(inProcess, ['config', 'set', 'state-url', url]);
    expect(JSON.parse(readFileSync(file, 'utf8'))['state-url']).toBe(url);
    const list = await inProcess(['config', 'list']);
    expect(list.stdout).toMatch(
      /^state-url +postgresql:\/\/team:\*\*\*@db\.example\.com\/sales\?sslmode=verify-full +config file$/m,
    );
    expect(list.stdout + list.stderr).not.toContain('Hunter2-state');
    const fromEnv = await inProcess(['config', 'list'], {
      env: { PROSPECT_STATE_URL: 'postgres://ops:Other-pw@10.0.0.5/crm?sslmode=disable' },
    });
    expect(fromEnv.stdout).toMatch(
      /^state-url +postgres:\/\/ops:\*\*\*@10\.0\.0\.5\/crm\?sslmode=disable +environment PROSPECT_STATE_URL$/m,
    );
    // A URL prospect cannot use is refused at set, without echoing its password.
    const refused = await inProcess(['config', 'set', 'state-url', 'mysql://team:Hunter2-state@db/x']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).not.toContain('Hunter2-state');
  });

  it('team-key: a secret read from stdin, shown as its last 4 characters, refused when short or on the line', async () => {
    const { file, inProcess } = await profile();
    const teamKey = 'team-key-of-the-sales-team-0123456789-cafe';
    const onLine = await inProcess(['config', 'set', 'team-key', teamKey]);
    expect(onLine.code).toBe(2);
    expect(onLine.stderr).toContain('refusing to take team-key from the command line');
    expect(onLine.stderr).not.toContain(teamKey);
    const short = await inProcess(['config', 'set', 'team-key'], { input: 'too-short-Secret\n' });
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('the team key has 16 characters, fewer than 32');
    expect(short.stderr).not.toContain('too-short-Secret');
    expect(existsSync(file)).toBe(false);
    const set = await inProcess(['--verbose', 'config', 'set', 'team-key'], { input: `${teamKey}\n` });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toContain('Set team-key to …cafe in');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ 'team-key': teamKey });
    const list = await inProcess(['config', 'list']);
    expect(list.stdout).toMatch(/^team-key +…cafe +config file$/m);
    const get = await inProcess(['config', 'get', 'team-key']);
    expect(get.stdout).toBe('…cafe\n');
    for (const run of [set, list, get]) expect(run.stdout + run.stderr).not.toContain(teamKey);
  });

  it('list marks an invalid value instead of failing, so it can be found and fixed', async () => {
    const { file, inProcess } = await profile();
    writeFileSync(file, '{"concurrency": 99}');
    const list = await inProcess(['config', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(
      /^concurrency +99 +config file, INVALID: concurrency takes a whole number from 1 to 32/m,
    );
  });

  it('get prints a stored value, and nothing for an unset key', async () => {
    const { inProcess } = await profile();
    await setUp(inProcess, ['config', 'set', 'base-url', 'https://api.example.com/']);
    expect(await inProcess(['config', 'get', 'base-url'])).toMatchObject({
      code: 0,
      stdout: 'https://api.example.com/\n',
    });
    expect(await inProcess(['config', 'get', 'format'])).toMatchObject({ code: 0, stdout: '' });
  });

  it('unset removes a key; the default applies again', async () => {
    const { file, inProcess } = await profile();
    await setUp(inProcess, ['config', 'set', 'format', 'JSON']);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ format: 'json' });
    expect((await inProcess(['config', 'unset', 'format'])).code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({});
    expect((await inProcess(['config', 'unset', 'format'])).code).toBe(0);
  });

  it('path prints the file, honouring PROSPECT_CONFIG_DIR', async () => {
    const { file, inProcess } = await profile();
    // In process: test/examples.cli.test.ts spawns `"$EDITOR" "$(prospect config path)"`.
    expect(await inProcess(['config', 'path'])).toMatchObject({ code: 0, stdout: `${file}\n` });
  });
});

describe('config set checks values (exit 2, nothing written)', () => {
  // In process: the umask case above is this file's spawned case.
  it.each([
    [['base-url', 'http://api.example.com'], 'refusing to send the API key over plain http'],
    [['base-url', 'not a url'], 'is not a valid URL'],
    [['max-age', 'soon'], '"soon" is not a duration'],
    [['max-age', '2999-01-01'], 'is in the future'],
    [['concurrency', '0'], 'concurrency takes a whole number from 1 to 32'],
    [['concurrency', '33'], 'concurrency takes a whole number from 1 to 32'],
    [['format', 'xml'], 'unknown format "xml"'],
    [['cursor-param', 'a&b'], 'is not a usable query parameter name'],
    [['max-age'], 'config set max-age needs a value'],
    [
      ['colour', 'blue'],
      'Allowed choices are api-key, base-url, proxy, ca-file, cursor-param, paging, offset-param, page-size-param',
    ],
  ])('config set %j', async (args, message) => {
    const { file, inProcess } = await profile();
    const refused = await inProcess(['config', 'set', ...args]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(message);
    expect(existsSync(file)).toBe(false);
  });

  it('accepts plain http to this machine (the sandbox)', async () => {
    const { inProcess } = await profile();
    expect((await inProcess(['config', 'set', 'base-url', 'http://127.0.0.1:4010'])).code).toBe(0);
  });
});

describe('a corrupt config file', () => {
  const corrupt = '{"max-age": "6m",,}';

  it.each([
    ['config list', ['config', 'list']],
    ['config set', ['config', 'set', 'max-age', '1y']],
    ['config unset', ['config', 'unset', 'max-age']],
    ['config get', ['config', 'get', 'max-age']],
    ['a data command (flag defaults)', ['contacts', 'acme.com']],
    ['a data command (connection)', ['companies', '-t', 'Shopify']],
  ])('%s: exit 2 with its path, and the file is left as it was', async (what, args) => {
    const { file, inProcess } = await profile();
    writeFileSync(file, corrupt);
    const result = await inProcess(args, {
      url: 'http://127.0.0.1:9',
      apiKey: ENV_KEY,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`prospect: the config file ${file} is unusable: it is not valid JSON`);
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(readFileSync(file, 'utf8')).toBe(corrupt);
  });

  it('never quotes the file, which may hold the key (JSON.parse messages do)', async () => {
    const { file, inProcess } = await profile();
    writeFileSync(file, `{"api-key": ${FILE_KEY}}`);
    const result = await inProcess(['--debug', 'config', 'list'], {
      apiKey: FILE_KEY,
      env: { PROSPECT_API_KEY: undefined },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`the config file ${file} is unusable: it is not valid JSON`);
    expect(result.stderr).not.toContain('sk_live');
  });

  it('an invalid value stops a data command before any request, naming the file and the key', async () => {
    const { file, inProcess } = await profile();
    writeFileSync(file, '{"max-age": "soon"}');
    const result = await inProcess(['contacts', 'acme.com'], { url: 'http://127.0.0.1:9', apiKey: ENV_KEY });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`the config file ${file} has an invalid max-age`);
    expect(result.stderr).toContain('prospect config unset max-age');
  });
});

/**
 * In process: the same main(), each run with its own environment and config directory, as a spawned
 * run has.
 */
describe('precedence through the binary: flag > environment > config file > default', () => {
  let server: ScriptedServer;
  const lastSeen = new Date(Date.now() - 200 * 86_400_000).toISOString().slice(0, 10);

  // A server per test: no test depends on what an earlier one sent or used up.
  beforeEach(async () => {
    server = await startScriptedServer((request) =>
      request.path.endsWith('/contacts')
        ? {
            body: {
              data: [sampleContact('acme.com', { business_email_last_seen: lastSeen })],
              meta: { domains_requested: 1, limit: 200 },
              next_cursor: null,
            },
          }
        : request.path.endsWith('/companies')
          ? { body: companiesPage(['acme.com', 'globex.com'], null) }
          : { status: 404, body: errorBody('not_found', 'no such path') },
    );
  });
  afterEach(async () => {
    await server?.close();
  });

  const authorizationOfLastRequest = () => server.requests.at(-1)?.headers.authorization;

  it('key and address from the config file when nothing else says', async () => {
    const { inProcess } = await profile();
    await setUp(inProcess, ['config', 'set', 'base-url', server.url]);
    await setUp(inProcess, ['config', 'set', 'api-key'], { input: FILE_KEY });
    const result = await inProcess(['companies', '-t', 'Shopify', '--format', 'csv'], {
      apiKey: FILE_KEY,
      env: { PROSPECT_API_KEY: undefined },
    });
    expect(result.code).toBe(0);
    expect(authorizationOfLastRequest()).toBe(`Bearer ${FILE_KEY}`);
  });

  it('the environment over the config file', async () => {
    const { inProcess } = await profile();
    await setUp(inProcess, ['config', 'set', 'base-url', 'https://unused.example.com']);
    await setUp(inProcess, ['config', 'set', 'api-key'], { input: FILE_KEY });
    const result = await inProcess(['companies', '-t', 'Shopify', '--format', 'csv'], {
      apiKey: ENV_KEY,
      url: server.url,
    });
    expect(result.code).toBe(0);
    expect(authorizationOfLastRequest()).toBe(`Bearer ${ENV_KEY}`);
  });

  it('the --base-url flag over the environment', async () => {
    const { inProcess } = await profile();
    const before = server.requests.length;
    const result = await inProcess(['--base-url', server.url, 'companies', '-t', 'Shopify', '--format', 'csv'], {
      apiKey: ENV_KEY,
      url: 'https://unused.example.com',
    });
    expect(result.code).toBe(0);
    expect(server.requests.length).toBeGreaterThan(before);
  });

  it('format: the config file over the default; --format and -o FILE over the config file', async () => {
    const { dir, inProcess } = await profile();
    const run = inProcess;
    const options = { apiKey: ENV_KEY, url: server.url };
    expect((await run(['companies', '-t', 'Shopify'], options)).stdout).toMatch(/^domain,company_name/);
    await setUp(inProcess, ['config', 'set', 'format', 'ndjson']);
    const fromConfig = await run(['companies', '-t', 'Shopify'], options);
    expect(
      fromConfig.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line).domain),
    ).toEqual(['acme.com', 'globex.com']);
    expect((await run(['companies', '-t', 'Shopify', '--format', 'csv'], options)).stdout).toMatch(
      /^domain,company_name/,
    );
    const output = join(dir, 'leads.csv');
    expect((await run(['companies', '-t', 'Shopify', '-o', output], options)).code).toBe(0);
    expect(readFileSync(output, 'utf8')).toMatch(/^domain,company_name/);
  });

  it('max-age: the config file over the default, --max-age over the config file', async () => {
    const { inProcess } = await profile();
    const run = inProcess;
    const options = { apiKey: ENV_KEY, url: server.url };
    const freshness = async (args: string[]) => {
      const result = await run(['contacts', 'acme.com', '--format', 'csv', ...args], options);
      expect(result.code).toBe(0);
      return csvRecords(result.stdout)[0]?.email_freshness;
    };
    expect(await freshness([])).toBe('stale'); // default 90d: 200 days is stale
    await setUp(inProcess, ['config', 'set', 'max-age', '1y']);
    expect(await freshness([])).toBe('fresh');
    expect(await freshness(['--max-age', '30d'])).toBe('stale');
  });
});

/** In process: what main() writes to stderr. */
describe('--debug', () => {
  let server: ScriptedServer;

  // A server per test, each starting with its 503: a test run alone sees what it would see in the suite.
  beforeEach(async () => {
    server = await startScriptedServer([
      { status: 503, headers: { 'retry-after': '0' }, body: errorBody('unavailable', 'try again') },
      { body: companiesPage(['acme.com'], null) },
    ]);
  });
  afterEach(async () => {
    await server?.close();
  });

  it('logs method, URL, status, duration, attempt and wait per request, with the key redacted', async () => {
    const { inProcess } = await profile();
    const result = await inProcess(['--debug', 'companies', '-t', 'Shopify', '--format', 'csv'], {
      apiKey: ENV_KEY,
      url: server.url,
    });
    expect(result.code).toBe(0);
    const lines = result.stderr.split('\n').filter((line) => line.startsWith('debug: '));
    expect(lines).toHaveLength(2);
    const url = `${server.url}/api/v1/companies?technology=Shopify`;
    expect(lines[0]).toMatch(
      new RegExp(
        `^debug: GET ${escapeRegExp(url)}\\S* \\(Authorization: Bearer \\*\\*\\*\\) -> 503 in \\d+ ms, attempt 1, retry in \\d+ ms$`,
      ),
    );
    expect(lines[1]).toMatch(
      new RegExp(
        `^debug: GET ${escapeRegExp(url)}\\S* \\(Authorization: Bearer \\*\\*\\*\\) -> 200 in \\d+ ms, attempt 2$`,
      ),
    );
  });

  it('PROSPECT_DEBUG=1 does the same', async () => {
    const { inProcess } = await profile();
    const result = await inProcess(['companies', '-t', 'Shopify', '--format', 'csv'], {
      apiKey: ENV_KEY,
      url: server.url,
      env: { PROSPECT_DEBUG: '1' },
    });
    expect(result.code).toBe(0);
    const lines = result.stderr.split('\n').filter((line) => line.startsWith('debug: '));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^debug: GET .*\(Authorization: Bearer \*\*\*\) -> 503 in \d+ ms, attempt 1, retry in \d+ ms$/,
    );
    expect(lines[1]).toMatch(/^debug: GET .*\(Authorization: Bearer \*\*\*\) -> 200 in \d+ ms, attempt 2$/);
  });

  it('shows a stack trace only with --debug', async () => {
    const { inProcess: run } = await profile();
    const quiet = await run(['contacts', 'acme.com']);
    expect(quiet.code).toBe(2);
    expect(quiet.stderr).toContain('prospect: no API key is set.');
    expect(quiet.stderr).not.toMatch(/^\s+at /m);
    const debug = await run(['--debug', 'contacts', 'acme.com']);
    expect(debug.code).toBe(2);
    expect(debug.stderr).toMatch(/^\s+at /m);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('a proxy password is never shown (issue 34)', () => {
  // Every form the proxy setting accepts: no scheme, `@` in the user, `@` in the password, percent-encoding.
  const FORMS = [
    'alice:secret@host:3128',
    'http://alice@corp:secret@host:3128',
    'http://alice:p@ssw0rd@host:3128',
    'http://alice%40corp:s%40cr%3Aet@host:3128',
  ];
  const passwordParts = ['secret', 'p@ssw0rd', 'ssw0rd', 's%40cr%3Aet', 'cr%3Aet'];

  it.for(FORMS)('%s: config list and config get proxy show ***', async (form) => {
    const { inProcess } = await profile();
    await setUp(inProcess, ['config', 'set', 'proxy', form]);
    const list = await inProcess(['config', 'list']);
    const get = await inProcess(['config', 'get', 'proxy']);
    expect(list.code).toBe(0);
    expect(get.code).toBe(0);
    expect(list.stdout).toMatch(/^proxy +\S*:\*\*\*@host:3128 +config file$/m);
    expect(get.stdout).toMatch(/^\S*:\*\*\*@host:3128\n$/);
    for (const part of passwordParts) {
      expect(list.stdout).not.toContain(part);
      expect(get.stdout).not.toContain(part);
    }
  });
});

describe('--debug with a service that echoes the key', () => {
  let echoing: ScriptedServer | undefined;
  afterEach(async () => {
    await echoing?.close();
  });

  it('prints request URLs with the key removed, in any letter case', async () => {
    echoing = await startScriptedServer([
      { body: companiesPage(['acme.com'], `c1-${ENV_KEY.toUpperCase()}`) },
      { body: companiesPage(['beta.com'], `c2-${ENV_KEY}`) },
      { body: companiesPage(['gamma.com'], null) },
    ]);
    const { inProcess } = await profile();
    const result = await inProcess(['--debug', 'companies', '-t', 'Shopify', '--format', 'csv'], {
      apiKey: ENV_KEY,
      url: echoing.url,
    });
    expect(result.code).toBe(0);
    const lines = result.stderr.split('\n').filter((line) => line.startsWith('debug: GET'));
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain('cursor=c1-[redacted] ');
    expect(lines[2]).toContain('cursor=c2-[redacted] ');
    expect(result.stderr.toLowerCase()).not.toContain(ENV_KEY.toLowerCase());
  });
});

describe('a URL with a password: read from stdin or a hidden prompt, warned of on the command line (issue 41)', () => {
  const password = 'Hunter2-state';
  const urls = {
    proxy: `http://alice:${password}@proxy.example.com:3128`,
    'state-url': `postgresql://team:${password}@db.example.com/sales?sslmode=verify-full`,
  };

  it.for(Object.entries(urls))('%s from stdin: stored as given, nothing said of history', async ([key, url]) => {
    const { inProcess, file } = await profile();
    const set = await inProcess(['config', 'set', key], { input: `${url}\n` });
    expect(set.code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8'))[key]).toBe(url);
    expect(set.stderr).not.toContain('shell history');
    expect(set.stdout + set.stderr).not.toContain(password);
  });

  it.for(Object.entries(urls))(
    '%s on the command line: stored, with a warning that names the fix',
    async ([key, url]) => {
      const { inProcess, file } = await profile();
      const set = await inProcess(['config', 'set', key, url]);
      expect(set.code).toBe(0);
      expect(JSON.parse(readFileSync(file, 'utf8'))[key]).toBe(url);
      expect(set.stderr).toContain(
        `the ${key} password was given on the command line: it is now in your shell history`,
      );
      expect(set.stderr).toContain(`printf %s "$URL" | prospect config set ${key}`);
      expect(set.stdout + set.stderr).not.toContain(password);
    },
  );

  it('a URL without a password on the command line is taken without a word', async () => {
    const { inProcess } = await profile();
    const set = await inProcess(['config', 'set', 'proxy', 'http://proxy.example.com:3128']);
    expect(set.code).toBe(0);
    expect(set.stderr).not.toContain('shell history');
  });

  it('nothing on stdin is exit 2, naming the setting', async () => {
    const { inProcess, file } = await profile();
    const set = await inProcess(['config', 'set', 'state-url'], { input: '' });
    expect(set.code).toBe(2);
    expect(set.stderr).toContain('no state URL on stdin.');
    expect(set.stderr).toContain('prospect config set state-url');
    expect(existsSync(file)).toBe(false);
  });
});

describe('a state URL password is never shown, in any form libpq reads (issue 41)', () => {
  const password = 'Hunter2-state';
  it.for([
    `postgresql://team@db.example.com/sales?sslmode=verify-full&password=${password}`,
    `postgresql://team@db.example.com/sales?password=${encodeURIComponent(`${password}&x`)}`,
    `postgres://:${password}@db.example.com/sales`,
    `postgres://team:${password}@db.example.com/sales?password=${password}`,
  ])('%s: config list, config get and a refused set show ***', async (url) => {
    const { inProcess, file } = await profile();
    writeFileSync(file, JSON.stringify({ 'state-url': url }), { mode: 0o600 });
    const list = await inProcess(['config', 'list']);
    const get = await inProcess(['config', 'get', 'state-url']);
    const env = await inProcess(['config', 'list'], { env: { PROSPECT_STATE_URL: url } });
    const refused = await inProcess(['config', 'set', 'state-url'], { input: `${url}&sslpassword=${password}` });
    expect(refused.code).toBe(2);
    expect(list.stdout).toMatch(/^state-url +postgres\S*\*\*\*\S* +config file/m);
    expect(get.stdout).toContain('***');
    for (const run of [list, get, env, refused]) expect(run.stdout + run.stderr).not.toContain(password);
  });
});
