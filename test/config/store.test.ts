import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configFilePath } from '../../src/config/paths.js';
import { openConfigStore, readConfigValues } from '../../src/config/store.js';
import { ExitCode, UsageError } from '../../src/exit-codes.js';
import { scratchDir, scratchDirSync } from '../helpers/scratch.js';

const SECRET = 'sk_live_unit_secret_f00d';

async function configDir(content?: string): Promise<NodeJS.ProcessEnv> {
  const dir = await scratchDir('prospect-config-unit-');
  if (content !== undefined) writeFileSync(join(dir, 'config.json'), content);
  return { PROSPECT_CONFIG_DIR: dir };
}

function configDirSync(content: string): NodeJS.ProcessEnv {
  const dir = scratchDirSync('prospect-config-unit-');
  writeFileSync(join(dir, 'config.json'), content);
  return { PROSPECT_CONFIG_DIR: dir };
}

function thrown(run: () => unknown): UsageError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }
  throw new Error('expected a UsageError');
}

describe('readConfigValues', () => {
  it('is empty when there is no file', async () => {
    expect(readConfigValues(await configDir())).toEqual({});
  });

  it('reads and checks every known key, ignoring unknown ones', async () => {
    const env = await configDir(
      JSON.stringify({
        'api-key': SECRET,
        'base-url': 'https://api.example.com',
        'cursor-param': 'page_token',
        'max-age': '6m',
        concurrency: 8,
        format: 'json',
        colour: 'blue',
      }),
    );
    expect(readConfigValues(env)).toEqual({
      apiKey: SECRET,
      baseUrl: 'https://api.example.com',
      cursorParam: 'page_token',
      maxAge: '6m',
      concurrency: 8,
      format: 'json',
    });
  });

  it('accepts a number written as a string (a hand-edited file)', async () => {
    expect(readConfigValues(await configDir('{"concurrency": "12"}'))).toEqual({ concurrency: 12 });
  });

  it.each([
    ['max-age', '"soon"', /max-age: "soon" is not a duration/],
    ['concurrency', '64', /concurrency: concurrency takes a whole number from 1 to 32/],
    ['format', '"xml"', /format: unknown format "xml"/],
    ['base-url', '"http://api.example.com"', /base-url: refusing to send the API key over plain http/],
    ['cursor-param', '"a b"', /cursor-param: "a b" is not a usable query parameter name/],
    ['max-age', '["90d"]', /max-age: expected a string, found an array/],
  ])('an invalid %s (%s) is a usage error naming the file and the key', async (key, json, message) => {
    const env = await configDir(`{"${key}": ${json}}`);
    const error = thrown(() => readConfigValues(env));
    expect(error.exitCode).toBe(ExitCode.usage);
    expect(error.message).toContain(`the config file ${configFilePath(env)} has an invalid ${key}`);
    expect(error.message).toMatch(message);
    expect(error.hint).toContain(`prospect config unset ${key}`);
  });

  it('never repeats an invalid key in its message', async () => {
    const env = await configDir(JSON.stringify({ 'api-key': `${SECRET} trailing` }));
    const error = thrown(() => readConfigValues(env));
    expect(error.message).toContain('has an invalid api-key');
    expect(`${error.message} ${error.hint}`).not.toContain(SECRET);
  });

  it('never quotes the broken file (the parser would: it could be the key), only where it broke', async () => {
    const unquoted = thrown(() => readConfigValues(configDirSync(`{"api-key": ${SECRET}}`)));
    expect(unquoted.message).toMatch(/is unusable: it is not valid JSON\.$/);
    expect(`${unquoted.message} ${unquoted.hint}`).not.toMatch(/sk_live/);
    const trailingComma = thrown(() => readConfigValues(configDirSync('{\n  "max-age": "6m",,\n}')));
    expect(trailingComma.message).toMatch(/is not valid JSON \(line 2, column 19\)\.$/);
  });

  it.each([
    ['not JSON', '{"max-age": "90d",', /is not valid JSON/],
    ['empty', '', /is not valid JSON/],
    ['an array', '["90d"]', /must hold one JSON object/],
    ['null', 'null', /must hold one JSON object/],
  ])('a file that is %s is a usage error with its path', async (_what, content, message) => {
    const env = await configDir(content);
    const error = thrown(() => readConfigValues(env));
    expect(error.exitCode).toBe(ExitCode.usage);
    expect(error.message).toContain(configFilePath(env));
    expect(error.message).toMatch(message);
    expect(error.hint).toMatch(/leaves it as it is/);
  });
});

describe('openConfigStore (writes through conf)', () => {
  it('writes the file with mode 0600', async () => {
    const env = await configDir();
    const store = await openConfigStore(env);
    store.set('max-age', '6m');
    store.set('concurrency', 8);
    expect(statSync(configFilePath(env)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(configFilePath(env), 'utf8'))).toEqual({ 'max-age': '6m', concurrency: 8 });
  });

  it('chmods a file that was more open even where conf writes in place (SNAP), where its mode option does nothing', async () => {
    const env = await configDir('{}');
    const path = configFilePath(env);
    chmodSync(path, 0o644);
    process.env.SNAP = '1';
    try {
      (await openConfigStore(env)).set('format', 'csv');
    } finally {
      delete process.env.SNAP;
    }
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ format: 'csv' });
  });

  it('creates a missing directory private to its owner', async () => {
    const base = (await configDir()).PROSPECT_CONFIG_DIR!;
    const env = { PROSPECT_CONFIG_DIR: join(base, 'nested', 'dir') };
    (await openConfigStore(env)).set('format', 'csv');
    expect(statSync(join(base, 'nested', 'dir')).mode & 0o777).toBe(0o700);
    expect(statSync(configFilePath(env)).mode & 0o777).toBe(0o600);
  });

  it('unset removes a key and says whether there was one', async () => {
    const env = await configDir('{"max-age": "6m", "format": "csv"}');
    const store = await openConfigStore(env);
    expect(store.unset('max-age')).toBe(true);
    expect(store.unset('max-age')).toBe(false);
    expect(JSON.parse(readFileSync(configFilePath(env), 'utf8'))).toEqual({ format: 'csv' });
  });

  it('refuses a corrupt file with its path and leaves it untouched (never clears it)', async () => {
    const env = await configDir('{"api-key": "sk_live_half');
    await expect(openConfigStore(env)).rejects.toThrow(`the config file ${configFilePath(env)} is unusable`);
    expect(readFileSync(configFilePath(env), 'utf8')).toBe('{"api-key": "sk_live_half');
  });

  it('a key with a dot stays one key (no nesting)', async () => {
    const env = await configDir();
    mkdirSync(env.PROSPECT_CONFIG_DIR!, { recursive: true });
    (await openConfigStore(env)).set('base-url', 'https://api.example.com');
    expect(JSON.parse(readFileSync(configFilePath(env), 'utf8'))).toEqual({ 'base-url': 'https://api.example.com' });
  });
});
