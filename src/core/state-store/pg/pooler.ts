/**
 * Whether this connection keeps its server session. A pooler in transaction or statement mode
 * (PgBouncer, Supavisor, Odyssey, pgcat) gives the server session back to its pool after each
 * transaction: the job's session advisory lock and the claims' holder (pg_backend_pid()) would stay
 * behind on a session any client may get next. No pooler says which mode it runs, so this looks at
 * what it does: a second connection, opened while this one is idle, is handed this one's server
 * session, or this one is moved to another. A server reached directly, or a session-mode pool, can
 * do neither: a live session is never shared.
 */
import type { Socket } from 'node:net';
import type pg from 'pg';

/** One server session, as the server knows it: a pid is reused, a pid and its start time are not. */
export interface Backend {
  pid: number;
  started: string;
  /** The connection as the server sees it: the client's end and its own (null over a Unix socket). */
  addr: string | null;
  port: number | null;
  serverAddr: string | null;
  serverPort: number | null;
}

const BACKEND_QUERY = `SELECT pg_catalog.pg_backend_pid() AS pid, backend_start::text AS started,
  pg_catalog.host(pg_catalog.inet_client_addr()) AS addr, pg_catalog.inet_client_port() AS port,
  pg_catalog.host(pg_catalog.inet_server_addr()) AS "serverAddr", pg_catalog.inet_server_port() AS "serverPort"
  FROM pg_catalog.pg_stat_activity WHERE pid = pg_catalog.pg_backend_pid()`;

/**
 * direct: the server sees this very socket, so nothing stands between; kept: something does (a
 * session-mode pool, a proxy, NAT) and the session stayed this connection's; shared: a pooler shares
 * it; unknown: the second connection could not be made or answered in time, which the session
 * refuses as it refuses shared (a transaction pool on a loaded machine can look so).
 */
const PROBE_ROUNDS = 3;

export type SessionPath = 'direct' | 'kept' | 'shared' | 'unknown';

export async function backendOf(client: pg.Client): Promise<Backend> {
  const { rows } = await client.query<Backend>(BACKEND_QUERY);
  const found = rows[0];
  if (found === undefined) throw new Error('the server did not list this session in pg_stat_activity');
  return found;
}

/** Tells how this connection (whose session is `first`) reaches its server session; `probe` opens a second one. */
export async function sessionPath(
  client: pg.Client,
  first: Backend,
  probe: () => Promise<pg.Client>,
): Promise<SessionPath> {
  if (seesThisSocket(client, first)) return 'direct';
  const path = await secondClientPath(client, first, probe);
  // Turns about can miss (a probe too slow on a loaded machine gives 'unknown'); a statement-mode
  // pooler also refuses a transaction block outright, whatever sessions it hands out.
  if (path !== 'shared' && (await refusesTransactionBlocks(client))) return 'shared';
  return path;
}

async function secondClientPath(
  client: pg.Client,
  first: Backend,
  probe: () => Promise<pg.Client>,
): Promise<SessionPath> {
  // A pool with no free server for the second connection, or a full server: nothing is known (a pool
  // that shares sessions would have handed it this one's idle session at once).
  const other = await probe().catch(() => undefined);
  if (other === undefined) return 'unknown';
  try {
    // This connection looks again before the second one does: a round-robin pool hands it the session
    // idle longest, not the one it just gave back (looking only in turns, two clients of a pool of two
    // idle sessions would each keep getting one). Then the second: a last-in-first-out pool hands it
    // this connection's idle session. A few rounds: idle sessions come and go (one logging in joins late).
    for (let round = 0; round < PROBE_ROUNDS; round += 1) {
      if (!sameBackend(await backendOf(client), first)) return 'shared';
      const second = await backendOf(other).catch(() => undefined);
      if (second === undefined) return 'unknown';
      if (sameBackend(second, first)) return 'shared';
    }
    return 'kept';
  } finally {
    await other.end().catch(() => {});
  }
}

/** PgBouncer in statement mode: "transaction blocks not allowed in statement pooling mode". */
async function refusesTransactionBlocks(client: pg.Client): Promise<boolean> {
  try {
    await client.query('BEGIN');
    await client.query('COMMIT');
    return false;
  } catch (error) {
    if (/transaction blocks not allowed|statement pooling/i.test(String(error))) return true;
    throw error;
  }
}

function sameBackend(a: Backend, b: Backend): boolean {
  return a.pid === b.pid && a.started === b.started;
}

/**
 * The server sees this very TCP connection: both its ends (a connection's four numbers are unique on a
 * network, and a pooler's connection to the server ends at the server, not at the pooler). One end
 * alone is not enough: a pooler on this machine may connect from the same port number as this client.
 */
function seesThisSocket(client: pg.Client, backend: Backend): boolean {
  const socket = (client as unknown as { connection?: { stream?: Socket } }).connection?.stream;
  if (socket?.localPort === undefined || socket.remotePort === undefined) return false;
  const bare = (address: string | null | undefined) => (address ?? '').replace(/^::ffff:/, '');
  return (
    backend.port === socket.localPort &&
    backend.serverPort === socket.remotePort &&
    bare(backend.addr) !== '' &&
    bare(backend.addr) === bare(socket.localAddress) &&
    bare(backend.serverAddr) === bare(socket.remoteAddress)
  );
}
