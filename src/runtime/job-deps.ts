/**
 * What a job is given instead of building it (gh's Factory): its connection, its API clients and its
 * clock. The commands pass runtimeDeps; a test passes clients over a stub transport
 * (test/helpers/route-stub.ts) and a fixed clock, and runs the job in process, with no socket.
 */
import type { ClientOptions, ProspectClient } from '../api/index.js';
import { createApiClient } from './api-client.js';
import { resolveConnection, type Connection } from './connection.js';
import type { RunContext } from './context.js';

export interface JobDeps {
  /** The service and key to use, resolved when the job asks (after its flags are checked). */
  connection(): Promise<Connection>;
  /** The API client for that connection, closed when the run ends. */
  client(connection: Connection): ProspectClient;
  /**
   * The client for paid calls: a SIGINT or SIGTERM does not cut a call it has sent (the service may have
   * charged it), so the run waits for its answer and keeps it before it exits (Verifier.settle).
   */
  paidClient(connection: Connection): Pick<ProspectClient, 'verify'>;
  /** What carries a client's requests: the network ({}), or a test's stub (a dispatcher). */
  transport: Pick<ClientOptions, 'dispatcher'>;
  /** The moment ages are judged against (`--max-age`, stale addresses); durations keep the wall clock. */
  now(): Date;
}

/** The real ones: the connection from flags, environment and config, the CLI's client, the system clock. */
export function runtimeDeps(ctx: RunContext): JobDeps {
  return depsOn(ctx, resolveConnection, {}, () => new Date());
}

/** Deps whose clients go through `transport`: the network, or a test's stub. */
export function depsOn(
  ctx: RunContext,
  connection: (ctx: RunContext) => Promise<Connection>,
  transport: Pick<ClientOptions, 'dispatcher'>,
  now: () => Date,
): JobDeps {
  return {
    connection: () => connection(ctx),
    client: (resolved) => createApiClient(ctx, resolved, transport),
    paidClient: (resolved) => createApiClient({ ...ctx, signal: new AbortController().signal }, resolved, transport),
    transport,
    now,
  };
}
