/**
 * The documented precedence for where to connect: flag > environment > config file > default,
 * one test per row, through resolveConnection (what every data command calls).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/exit-codes.js';
import { resolveConnection } from '../../src/runtime/connection.js';
import type { GlobalOptions, RunContext } from '../../src/runtime/context.js';
import { scratchDir } from '../helpers/scratch.js';

const FILE_KEY = 'sk_file_0000000000001111';
const ENV_KEY = 'sk_env_00000000000002222';
const FILE_URL = 'https://file.example.com';
const ENV_URL = 'https://env.example.com';
const FLAG_URL = 'https://flag.example.com';

async function context(
  config: Record<string, unknown> | undefined,
  env: NodeJS.ProcessEnv = {},
  global: GlobalOptions = {},
): Promise<RunContext> {
  const dir = await scratchDir('prospect-precedence-');
  if (config !== undefined) writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  // resolveConnection reads only the global flags and the environment when not in --sandbox.
  return { global, env: { PROSPECT_CONFIG_DIR: dir, ...env } } as unknown as RunContext;
}

const fullFile = { 'api-key': FILE_KEY, 'base-url': FILE_URL, 'cursor-param': 'file_cursor' };

describe('api-key: environment > config file (there is no flag: a key on the command line leaks)', () => {
  it('environment over the config file', async () => {
    expect((await resolveConnection(await context(fullFile, { PROSPECT_API_KEY: ENV_KEY }))).apiKey).toBe(ENV_KEY);
  });

  it('the config file when the environment has none (or an empty one)', async () => {
    expect((await resolveConnection(await context(fullFile))).apiKey).toBe(FILE_KEY);
    expect((await resolveConnection(await context(fullFile, { PROSPECT_API_KEY: '  ' }))).apiKey).toBe(FILE_KEY);
  });

  it('no default: a usage error that says how to set it', async () => {
    const error = await resolveConnection(await context({ 'base-url': FILE_URL })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).hint).toContain('prospect config set api-key');
  });
});

describe('base-url: flag > environment > config file', () => {
  it('the --base-url flag over everything', async () => {
    expect(
      (await resolveConnection(await context(fullFile, { PROSPECT_BASE_URL: ENV_URL }, { baseUrl: FLAG_URL }))).baseUrl,
    ).toBe(FLAG_URL);
  });

  it('the environment over the config file', async () => {
    expect((await resolveConnection(await context(fullFile, { PROSPECT_BASE_URL: ENV_URL }))).baseUrl).toBe(ENV_URL);
  });

  it('the config file when nothing else says', async () => {
    expect((await resolveConnection(await context(fullFile))).baseUrl).toBe(FILE_URL);
  });

  it('no default: a usage error', async () => {
    await expect(resolveConnection(await context({ 'api-key': FILE_KEY }))).rejects.toThrow(
      /no service address is set/,
    );
  });
});

describe('cursor-param: environment > config file > the client default', () => {
  it('environment over the config file', async () => {
    expect(
      (await resolveConnection(await context(fullFile, { PROSPECT_CURSOR_PARAM: 'env_cursor' }))).cursorParam,
    ).toBe('env_cursor');
  });

  it('the config file', async () => {
    expect((await resolveConnection(await context(fullFile))).cursorParam).toBe('file_cursor');
  });

  it('otherwise unset, so the client uses "cursor"', async () => {
    expect(
      (await resolveConnection(await context({ 'api-key': FILE_KEY, 'base-url': FILE_URL }))).cursorParam,
    ).toBeUndefined();
  });
});

describe('an unusable config file', () => {
  it('is a usage error naming it, not a crash', async () => {
    const ctx = await context(undefined, { PROSPECT_API_KEY: ENV_KEY, PROSPECT_BASE_URL: ENV_URL });
    writeFileSync(join(ctx.env.PROSPECT_CONFIG_DIR!, 'config.json'), '{"api-key": ');
    await expect(resolveConnection(ctx)).rejects.toThrow(
      `the config file ${join(ctx.env.PROSPECT_CONFIG_DIR!, 'config.json')} is unusable`,
    );
  });
});

describe('the contract settings (issue 42): environment > config file, checked as config set checks them', () => {
  it('reach the connection under the client names, the pairs as maps; unset ones stay unset', async () => {
    const file = {
      ...fullFile,
      paging: 'offset',
      'contact-fields': 'business_email=email',
      'verify-statuses': 'accept_all=risky',
      'page-size-max': 100,
    };
    const env = { PROSPECT_OFFSET_PARAM: 'skip', PROSPECT_VERIFY_METHOD: 'post', PROSPECT_PAGING: 'Cursor' };
    expect((await resolveConnection(await context(file, env))).contract).toEqual({
      paging: 'cursor',
      offsetParam: 'skip',
      pageSizeMax: 100,
      contactFields: { business_email: 'email' },
      verifyMethod: 'POST',
      verifyStatuses: { accept_all: 'risky' },
    });
    expect((await resolveConnection(await context(fullFile))).contract).toEqual({});
  });

  it.each([
    ['PROSPECT_PAGING', 'pages', /PROSPECT_PAGING: paging must be cursor or offset/],
    ['PROSPECT_CONTACT_FIELDS', 'email=business_email', /"email" is not one of prospect's contact fields/],
    ['PROSPECT_VERIFY_STATUSES', 'ok=fine', /"fine" is not one of valid, invalid, risky, unknown/],
    ['PROSPECT_PAGE_SIZE_MAX', '5000', /from 1 to 1000/],
    ['PROSPECT_VERIFY_PATH', 'verify', /is not a usable path/],
  ])('a bad %s is a usage error naming it', async (variable, value, message) => {
    const error = await resolveConnection(await context(fullFile, { [variable]: value })).catch((caught) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toMatch(message);
  });
});
