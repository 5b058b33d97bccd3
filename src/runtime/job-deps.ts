/**
 * What a job is given instead of building it (gh's Factory): its connection, its API client and its
 * clock. The commands pass runtimeDeps; a test passes a client over a stub transport
 * (test/helpers/route-stub.ts) and a fixed clock, and runs the job in process, with no socket.
 */
import type { ProspectClient } from '../api/index.js';
import { createApiClient } from './api-client.js';
import { resolveConnection, type Connection } from './connection.js';
import type { RunContext } from './context.js';

export interface JobDeps {
  /** The service and key to use, resolved when the job asks (after its flags are checked). */
  connection(): Promise<Connection>;
  /** The API client for that connection, closed when the run ends. */
  client(connection: Connection): ProspectClient;
  /** The moment ages are judged against (`--max-age`, stale addresses); durations keep the wall clock. */
  now(): Date;
}

/** The real ones: the connection from flags, environment and config, the CLI's client, the system clock. */
export function runtimeDeps(ctx: RunContext): JobDeps {
  return {
    connection: () => resolveConnection(ctx),
    client: (connection) => createApiClient(ctx, connection),
    now: () => new Date(),
  };
}
