import { describe, expect, it } from 'vitest';
import { checkBaseUrl, createClient } from '../../src/api/client.js';
import { isLoopbackHost } from '../../src/api/proxy.js';
import { ClientOptionError } from '../../src/api/errors.js';

describe('checkBaseUrl', () => {
  it.each([
    'https://api.example.com',
    'https://api.example.com/',
    'http://127.0.0.1:4010',
    'http://127.9.8.7',
    'http://127.1:80',
    'http://localhost:4010/',
    'http://LOCALHOST',
    'http://[::1]:4010',
  ])('accepts %s', (url) => {
    expect(checkBaseUrl(url)).toBeInstanceOf(URL);
  });

  it.each([
    ['http://example.invalid', /plain http to example\.invalid/],
    ['http://10.0.0.1:4010', /plain http/],
    ['http://128.0.0.1', /plain http/],
    ['http://localhost.evil.com', /plain http/],
    ['http://127.0.0.1.nip.io', /plain http/],
    ['ftp://example.com', /must start with https/],
    ['not a url', /not a valid URL/],
    ['https://user:pw@example.com', /user name or password/],
    ['https://example.com/?key=1', /query or a fragment/],
  ])('refuses %s', (url, message) => {
    expect(() => checkBaseUrl(url)).toThrow(message);
    expect(() => checkBaseUrl(url)).toThrow(ClientOptionError);
  });

  it('isLoopbackHost', () => {
    expect(isLoopbackHost('127.0.0.1')).toBe(true);
    expect(isLoopbackHost('[::1]')).toBe(true);
    expect(isLoopbackHost('example.com')).toBe(false);
  });
});

describe('createClient option checks', () => {
  it('refuses an empty key or one with whitespace, without echoing it', () => {
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: '' })).toThrow(/no API key/);
    try {
      createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'secret-key\n' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ClientOptionError);
      expect(String((error as Error).message)).not.toContain('secret-key');
    }
  });
});

describe('numeric options', () => {
  it.each([
    ['pageSize', 0],
    ['pageSize', 1001],
    ['pageSize', 1.5],
    ['timeoutMs', 0],
    ['timeoutMs', 2 ** 31],
    ['maxRetries', -1],
    ['connections', 0],
    ['maxRetryDelayMs', Number.NaN],
  ])('refuses %s = %s', (name, value) => {
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', [name]: value })).toThrow(
      ClientOptionError,
    );
  });

  it('refuses an empty cursor parameter name', () => {
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', cursorParam: ' ' })).toThrow(
      /cursor parameter/,
    );
  });
});
