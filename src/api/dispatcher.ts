/**
 * The undici dispatcher every request goes through: a plain Agent, or a ProxyAgent when a proxy is
 * in effect (src/api/proxy.ts decides which). Both get the same pool size, timeouts and trusted
 * certificates, for the service and for an https proxy alike.
 */
import type { Dispatcher } from 'undici';

export interface NetworkOptions {
  /** The proxy to go through (credentials in the URL become Proxy-Authorization); undefined: direct. */
  proxy?: URL | undefined;
  /** PEM certificates to trust instead of Node's own list (which includes NODE_EXTRA_CA_CERTS); undefined: Node's. */
  ca?: readonly string[] | undefined;
  /** For the TCP connection and the TLS handshake, separate from (and shorter than) the read timeout. */
  connectTimeoutMs: number;
  /** Until the headers, and between pieces of the body. */
  readTimeoutMs: number;
  connections: number;
}

/** The connect timeout when none is given: long enough for a slow handshake, short beside the read timeout. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export function createDispatcher(undici: typeof import('undici'), options: NetworkOptions): Dispatcher {
  const tls = { timeout: options.connectTimeoutMs, ...(options.ca !== undefined ? { ca: [...options.ca] } : {}) };
  const pool = {
    connections: options.connections,
    headersTimeout: options.readTimeoutMs,
    bodyTimeout: options.readTimeoutMs,
  };
  if (options.proxy === undefined) return new undici.Agent({ ...pool, connect: tls });
  return new undici.ProxyAgent({ ...pool, uri: options.proxy.href, requestTls: tls, proxyTls: tls });
}
