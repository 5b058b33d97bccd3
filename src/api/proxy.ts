/**
 * Which proxy, if any, a request to the service goes through, read as curl and gh (Go's net/http)
 * read the environment: HTTPS_PROXY / https_proxy for https, HTTP_PROXY / http_proxy for http,
 * ALL_PROXY / all_proxy for either (curl's), and NO_PROXY / no_proxy for the hosts that go direct.
 * A `proxy` setting of prospect's own comes first. The client talks to one origin, so this is
 * decided once per run, and a diagnosis can say what was decided and why.
 *
 * NO_PROXY entries: `*` (no proxy at all), a name (`example.com` covers it and every name under it;
 * a leading `.` or `*.` is the same), an IP address, a CIDR block (`10.0.0.0/8`), each optionally
 * with `:port`. They match the host as written in the base URL, never after resolving it. This
 * machine (localhost, 127.0.0.0/8, ::1) is always reached directly, as Go does.
 */
import { BlockList, isIP } from 'node:net';
import { ClientOptionError } from './errors.js';

/** Where each proxy setting can come from, highest first; `setting` is prospect's own (config). */
export interface ProxySources {
  setting?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
}

export type ProxyDecision = { proxy: URL; source: string } | { proxy: undefined; why: string };

/** The proxy for requests to `target`, with where it came from; or why there is none. */
export function decideProxy(target: URL, sources: ProxySources): ProxyDecision {
  const host = bareHost(target.hostname);
  if (isLoopbackHost(target.hostname)) return { proxy: undefined, why: `${host} is this machine` };
  const found = proxySetting(target.protocol, sources);
  if (found === undefined) return { proxy: undefined, why: 'no proxy is set' };
  const noProxy = firstSet(sources.env, ['no_proxy', 'NO_PROXY']);
  const entry = noProxy && coveringEntry(host, portOf(target), noProxy.value);
  if (entry) return { proxy: undefined, why: `${noProxy.name} covers ${host} (${entry})` };
  return { proxy: parseProxyUrl(found.value, found.name), source: found.name };
}

/** A proxy URL as given; `host:port` alone means http://host:port, as curl reads it. */
export function parseProxyUrl(text: string, source: string): URL {
  const trimmed = text.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new ClientOptionError(
      `the proxy in ${source} is not a valid URL`,
      'Give it as http://host:port (user:password@ before the host if it needs them).',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ClientOptionError(
      `the proxy in ${source} uses ${url.protocol}//, which prospect does not speak`,
      'Use an http:// or https:// proxy.',
    );
  }
  return url;
}

/** The proxy's address for messages: never its user name or password. */
export function describeProxy(proxy: URL): string {
  return `${proxy.protocol}//${proxy.host}`;
}

function proxySetting(protocol: string, sources: ProxySources): { name: string; value: string } | undefined {
  if (sources.setting !== undefined && sources.setting.trim() !== '')
    return { name: 'the proxy setting', value: sources.setting };
  const specific = protocol === 'https:' ? ['https_proxy', 'HTTPS_PROXY'] : ['http_proxy', 'HTTP_PROXY'];
  return firstSet(sources.env, [...specific, 'all_proxy', 'ALL_PROXY']);
}

function firstSet(env: ProxySources['env'], names: readonly string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') return { name, value };
  }
  return undefined;
}

/** A URL's hostname without the brackets of an IPv6 address, in lower case. */
export function bareHost(hostname: string): string {
  return hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

/** A URL's port, or its scheme's default. */
export function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]']);

/** This machine, as the URL parser writes its hostname: requests there need no proxy, and may be plain http. */
export function isLoopbackHost(hostname: string): boolean {
  // The WHATWG URL parser already normalised 127.1, 0x7f.0.0.1 and friends to dotted quads.
  return LOOPBACK_HOSTS.has(hostname.toLowerCase()) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** The NO_PROXY entry that covers host:port, as written in the list; undefined when none does. */
function coveringEntry(host: string, port: number, noProxy: string): string | undefined {
  for (const written of noProxy.split(/[\s,]+/)) {
    if (written === '') continue;
    if (written === '*') return written;
    const { name, entryPort } = splitEntry(written);
    if (entryPort !== undefined && entryPort !== port) continue;
    if (entryCovers(name.toLowerCase(), host)) return written;
  }
  return undefined;
}

function splitEntry(entry: string): { name: string; entryPort: number | undefined } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed)
    return { name: bracketed[1]!, entryPort: bracketed[2] !== undefined ? Number(bracketed[2]) : undefined };
  // An IPv6 address or block has colons of its own: no port can follow it unbracketed.
  const withPort = isIP(entry) === 6 || entry.includes('::') ? undefined : /^(.+):(\d+)$/.exec(entry);
  return withPort ? { name: withPort[1]!, entryPort: Number(withPort[2]) } : { name: entry, entryPort: undefined };
}

function entryCovers(name: string, host: string): boolean {
  const block = /^(.+)\/(\d{1,3})$/.exec(name);
  if (block) return inBlock(host, block[1]!, Number(block[2]));
  if (isIP(name) !== 0) return inBlock(host, name, isIP(name) === 6 ? 128 : 32);
  const domain = name.replace(/^\*?\./, '');
  return host === domain || host.endsWith(`.${domain}`);
}

function inBlock(host: string, network: string, prefix: number): boolean {
  const family = isIP(network) === 6 ? 'ipv6' : isIP(network) === 4 ? 'ipv4' : undefined;
  if (family === undefined || isIP(host) === 0) return false;
  try {
    const list = new BlockList();
    list.addSubnet(network, prefix, family);
    return list.check(host, isIP(host) === 6 ? 'ipv6' : 'ipv4');
  } catch {
    return false;
  }
}
