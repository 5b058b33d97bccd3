/**
 * The library speaks no CLI (issue 37): src/api/ names no flag, no environment variable of prospect's
 * and no `prospect …` command. Its errors carry codes and facts; the CLI's advice is attached where
 * exit codes are decided (knownFailure in src/exit-codes.ts), and each piece of it is checked here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClientOptionError, createClient, RequestError } from '../../src/api/index.js';
import { errorFromResponse, rateLimitedError, retriesExhaustedError } from '../../src/api/error-responses.js';
import { tlsFailureError } from '../../src/api/transport-errors.js';
import { knownFailure } from '../../src/exit-codes.js';

const API = join(import.meta.dirname, '../../src/api');
const CLI_WORDS =
  /prospect (config|doctor|sandbox|help)|--(sandbox|timeout|concurrency|max-retries|max-answer-size|debug|max)\b|PROSPECT_[A-Z_]+/;

describe('src/api/ speaks no CLI', () => {
  it('no file names a flag, a prospect command or a PROSPECT_ variable', () => {
    const found = readdirSync(API)
      .filter((name) => name.endsWith('.ts'))
      .flatMap((name) =>
        readFileSync(join(API, name), 'utf8')
          .split('\n')
          .map((line, index) => ({ where: `${name}:${index + 1}`, line }))
          .filter(({ line }) => CLI_WORDS.test(line)),
      );
    expect(found).toEqual([]);
  });
});

describe('the CLI adds its words where the exit code is decided', () => {
  const hintOf = (error: unknown) => knownFailure(error)?.hint;

  it('no key, and a key in the base URL', () => {
    const noKey = (() => {
      try {
        createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: '' });
      } catch (error) {
        return error;
      }
    })();
    expect(noKey).toBeInstanceOf(ClientOptionError);
    expect((noKey as ClientOptionError).hint).toBeUndefined();
    expect(hintOf(noKey)).toBe('Set PROSPECT_API_KEY (or `prospect config set api-key`), or try --sandbox.');
    expect(hintOf(new ClientOptionError('x', 'y', 'credentials_in_base_url'))).toBe(
      'Put the API key in PROSPECT_API_KEY.',
    );
  });

  it('a plan, a timeout, a proxy, a rate limit', () => {
    const plan = errorFromResponse({
      endpoint: '/contacts',
      status: 403,
      bodyText: '{"error":{"code":"plan_required"}}',
    });
    expect(hintOf(plan)).toMatch(/or try --sandbox\.$/);
    const timeout = retriesExhaustedError(
      '/companies',
      6,
      { kind: 'timeout', timeoutMs: 30_000, where: 'h:443' },
      'h:443',
    );
    expect(hintOf(timeout)).toMatch(/--timeout SECONDS/);
    const connecting = retriesExhaustedError(
      '/companies',
      6,
      { kind: 'timeout', timeoutMs: 10_000, where: 'h:443', connecting: true },
      'h:443',
    );
    expect(hintOf(connecting)).not.toMatch(/--timeout/);
    const proxy = retriesExhaustedError(
      '/companies',
      6,
      { kind: 'network', failureClass: 'proxy', where: 'p:3128', description: 'refused' },
      'h:443',
    );
    expect(hintOf(proxy)).toMatch(/HTTPS_PROXY, ALL_PROXY or `prospect config set proxy URL`/);
    const limited = rateLimitedError('/companies', 30, 'h:443', new RequestError('x', { status: 429 }));
    expect(hintOf(limited)).toMatch(/a lower --concurrency\.$/);
  });

  it('an untrusted certificate names ca-file; an unknown TLS failure names doctor', () => {
    const untrusted = tlsFailureError({ code: 'SELF_SIGNED_CERT_IN_CHAIN' }, new URL('https://h'));
    expect(hintOf(untrusted)).toMatch(/`prospect config set ca-file PATH` or PROSPECT_CA_FILE/);
    const unknown = tlsFailureError({ code: 'ERR_SSL_SOMETHING_NEW' }, new URL('https://h'));
    expect(hintOf(unknown)).toBe('Run `prospect doctor` to see the certificate and TLS settings in effect.');
  });
});
