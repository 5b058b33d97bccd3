/**
 * Which proxy a request goes through (src/api/proxy.ts): the environment as curl and gh read it,
 * prospect's own setting first, NO_PROXY matched on the name as written, this machine never proxied.
 */
import { describe, expect, it } from 'vitest';
import { decideProxy, describeProxy, parseProxyUrl } from '../../src/api/proxy.js';

const decide = (target: string, env: Record<string, string>, setting?: string) =>
  decideProxy(new URL(target), { env, setting });
const proxyOf = (target: string, env: Record<string, string>, setting?: string) => {
  const decision = decide(target, env, setting);
  return decision.proxy === undefined ? `direct: ${decision.why}` : `${decision.proxy.host} from ${decision.source}`;
};

describe('decideProxy', () => {
  it('reads the variables of the target scheme first, then ALL_PROXY; lower case before upper, as curl', () => {
    expect(proxyOf('https://api.example.com', { HTTPS_PROXY: 'http://a:1', ALL_PROXY: 'http://b:2' })).toBe(
      'a:1 from HTTPS_PROXY',
    );
    expect(proxyOf('https://api.example.com', { https_proxy: 'http://c:3', HTTPS_PROXY: 'http://a:1' })).toBe(
      'c:3 from https_proxy',
    );
    expect(proxyOf('https://api.example.com', { HTTP_PROXY: 'http://a:1' })).toBe('direct: no proxy is set');
    expect(proxyOf('https://api.example.com', { all_proxy: 'http://b:2' })).toBe('b:2 from all_proxy');
    expect(proxyOf('http://10.1.2.3:8080', { HTTP_PROXY: 'http://a:1', HTTPS_PROXY: 'http://c:3' })).toBe(
      'a:1 from HTTP_PROXY',
    );
  });

  it('reads no_proxy in lower case and ALL_PROXY in upper case', () => {
    expect(proxyOf('https://api.example.com', { HTTPS_PROXY: 'http://a:1', no_proxy: 'example.com' })).toBe(
      'direct: no_proxy covers api.example.com (example.com)',
    );
    expect(proxyOf('https://api.example.com', { ALL_PROXY: 'http://b:2' })).toBe('b:2 from ALL_PROXY');
  });

  it("an IP address in NO_PROXY covers that address only: the usual 'localhost,127.0.0.1' proxies every name", () => {
    const env = { HTTPS_PROXY: 'http://a:1', NO_PROXY: 'localhost,127.0.0.1' };
    expect(proxyOf('https://api.example.com', env)).toBe('a:1 from HTTPS_PROXY');
    expect(proxyOf('https://10.1.2.4', { ...env, NO_PROXY: '10.1.2.3' })).toBe('a:1 from HTTPS_PROXY');
  });

  it('takes the proxy setting before the environment; NO_PROXY still applies to it', () => {
    expect(proxyOf('https://api.example.com', { HTTPS_PROXY: 'http://a:1' }, 'http://mine:3128')).toBe(
      'mine:3128 from the proxy setting',
    );
    expect(proxyOf('https://api.example.com', { NO_PROXY: 'example.com' }, 'http://mine:3128')).toBe(
      'direct: NO_PROXY covers api.example.com (example.com)',
    );
  });

  it('never proxies this machine, whatever is set: localhost, 127.0.0.0/8, ::1, as written', () => {
    const env = { HTTPS_PROXY: 'http://a:1', HTTP_PROXY: 'http://a:1' };
    for (const target of [
      'http://localhost:4010',
      'http://127.0.0.1:4010',
      'http://127.0.0.10:4010',
      'https://127.9.8.7',
      'http://[::1]:4010',
      'https://LOCALHOST',
    ]) {
      expect(proxyOf(target, env), target).toMatch(/^direct: .* is this machine$/);
    }
    // A name that only resolves to this machine is proxied: names are matched as written.
    expect(proxyOf('https://api.prospect.test', env)).toBe('a:1 from HTTPS_PROXY');
  });

  it.for([
    ['api.example.com', 'example.com', true],
    ['api.example.com', '.example.com', true],
    ['api.example.com', '*.example.com', true],
    ['example.com', '.example.com', true],
    ['notexample.com', 'example.com', false],
    ['api.example.com', 'api.example.com:443', true],
    ['api.example.com', 'api.example.com:8443', false],
    ['api.example.com', 'other.org, example.com', true],
    ['api.example.com', 'other.org example.com', true],
    ['api.example.com', '*', true],
    ['10.1.2.3', '10.0.0.0/8', true],
    ['10.1.2.3', '10.1.2.3', true],
    ['11.1.2.3', '10.0.0.0/8', false],
    ['[fd00::5]', 'fd00::/8', true],
    ['[fd00::5]', '[fd00::5]:443', true],
    ['[fd00::5]', 'fd00::5', true],
    ['[fd00::6]', 'fd00::5', false],
    ['API.Example.COM', 'example.com', true],
  ] as const)('NO_PROXY %s against %s: covered %s', ([host, noProxy, covered]) => {
    const decision = decide(`https://${host}`, { HTTPS_PROXY: 'http://a:1', NO_PROXY: noProxy });
    expect(decision.proxy === undefined).toBe(covered);
  });

  it('reads a bare host:port as http://, refuses other schemes, and shows a proxy without its password', () => {
    expect(parseProxyUrl('proxy.corp:3128', 'HTTPS_PROXY').href).toBe('http://proxy.corp:3128/');
    expect(() => parseProxyUrl('socks5://proxy.corp:1080', 'ALL_PROXY')).toThrow(
      /the proxy in ALL_PROXY uses socks5:\/\//,
    );
    expect(() => parseProxyUrl('http://', 'HTTPS_PROXY')).toThrow(/not a valid URL/);
    expect(describeProxy(new URL('http://user:hunter2@proxy.corp:3128'))).toBe('http://proxy.corp:3128');
  });
});
