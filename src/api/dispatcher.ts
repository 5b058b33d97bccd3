/**
 * The undici dispatcher every request goes through: a plain Agent, or a ProxyAgent when a proxy is
 * in effect (src/api/proxy.ts decides which). Both get the same pool size, timeouts and trusted
 * certificates, for the service and for an https proxy alike.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import type { buildConnector, Dispatcher, Pool } from 'undici';

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
  /** The transport to send through instead of one of the client's own (a test's stub); never closed by it. */
  dispatcher?: Dispatcher | undefined;
}

/** The connect timeout when none is given: long enough for a slow handshake, short beside the read timeout. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * TLS alerts a server sent after the handshake, by the connection's local address. Under TLS 1.3 a
 * server that demands a client certificate says so only then, and undici reports "other side closed"
 * (naming the socket's addresses, not the alert): the alert is found here by those addresses.
 */
const tlsAlerts = new Map<string, Error>();
const ALERT_KEPT_MS = 60_000;

function watchTlsAlerts(connector: buildConnector.connector): buildConnector.connector {
  return (params, callback) =>
    connector(params, (error, socket) => {
      if (error === null && socket != null) {
        const key = `${socket.localAddress}:${socket.localPort}`;
        socket.on('error', (alert: Error & { code?: string }) => {
          if (!/^ERR_SSL_/.test(alert.code ?? '')) return;
          tlsAlerts.set(key, alert);
          setTimeout(() => tlsAlerts.delete(key), ALERT_KEPT_MS).unref();
        });
      }
      (callback as (error: Error | null, socket: unknown) => void)(error, socket);
    });
}

/** The TLS alert behind an undici socket error (which carries the socket's local address), if one came. */
export function tlsAlertBehind(error: unknown): Error | undefined {
  const socket = (error as { socket?: { localAddress?: string; localPort?: number } } | null)?.socket;
  return socket?.localPort !== undefined ? tlsAlerts.get(`${socket.localAddress}:${socket.localPort}`) : undefined;
}

/** Set on an error met on the way to the proxy, so it is blamed on the proxy, not the service. */
export const AT_PROXY = Symbol('prospect.atProxy');

/** The proxy refused the tunnel (CONNECT answered other than 200), with what it said in its headers. */
export class TunnelRefusedError extends Error {
  override readonly name = 'TunnelRefusedError';

  constructor(
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
  ) {
    // The words undici uses for the same refusal, which transport-errors.ts reads the status from.
    super(`Proxy response (${status}) !== 200 when HTTP Tunneling`);
  }
}

export function createDispatcher(undici: typeof import('undici'), options: NetworkOptions): Dispatcher {
  const tls = { timeout: options.connectTimeoutMs, ...(options.ca !== undefined ? { ca: [...options.ca] } : {}) };
  const pool = {
    connections: options.connections,
    headersTimeout: options.readTimeoutMs,
    bodyTimeout: options.readTimeoutMs,
  };
  if (options.proxy === undefined)
    return new undici.Agent({ ...pool, connect: watchTlsAlerts(undici.buildConnector(tls)) });
  return new undici.ProxyAgent({
    ...pool,
    uri: options.proxy.href,
    requestTls: tls,
    proxyTls: tls,
    clientFactory: proxyClientFactory(undici, tls),
  });
}

/**
 * The connection to the proxy itself. Three things undici does not do: an IP address is not sent as
 * the TLS server name (RFC 6066; Node warns DEP0123 on stderr), an error on the way is marked as the
 * proxy's, and a refused tunnel keeps the proxy's headers (squid's X-Squid-Error names a DNS failure).
 */
function proxyClientFactory(
  undici: typeof import('undici'),
  tls: buildConnector.BuildOptions,
): (origin: URL, options: object) => Dispatcher {
  const connector = undici.buildConnector(tls);
  const connect: buildConnector.connector = (params, callback) =>
    connector(
      { ...params, servername: params.servername && isIP(params.servername) ? undefined : params.servername },
      (error, socket) => {
        if (error !== null) Object.defineProperty(error, AT_PROXY, { value: true });
        (callback as (error: Error | null, socket: unknown) => void)(error, socket);
      },
    );
  return (origin, options) => {
    const client: Pool = new undici.Pool(origin, { ...options, connect });
    const tunnel = client.connect.bind(client) as (
      params: Dispatcher.ConnectOptions,
    ) => Promise<Dispatcher.ConnectData>;
    Object.assign(client, {
      connect: async (params: Dispatcher.ConnectOptions) => {
        const answer = await tunnel(params);
        if (answer.statusCode === 200) return answer;
        answer.socket.destroy();
        throw new TunnelRefusedError(answer.statusCode, answer.headers);
      },
    });
    return client;
  };
}
