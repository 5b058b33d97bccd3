// The bench's PostgreSQL: a throwaway cluster started and stopped by test/helpers/pg-cluster.mjs, as the tests
// start theirs, but owned by one bench process; and a database with a plain role, as docs/team.md sets one up.
import pg from 'pg';
import { createTeamDatabase, startPgCluster, stopPgCluster } from '../test/helpers/pg-cluster.mjs';

/** Starts a cluster: { dir, port, socketDir }. Stop it with stopCluster. */
export const startCluster = () => startPgCluster({ password: 'postgres-bench-password', prefix: 'prospect-bench-pg-' });

export const stopCluster = ({ dir }) => stopPgCluster(dir);

/** A database and a plain role that may create in it (as docs/team.md sets one up): its state URL. */
export async function benchDatabase({ socketDir, port }, name) {
  const admin = new pg.Client({ host: socketDir, port, user: 'postgres', database: 'postgres' });
  await admin.connect();
  try {
    const { url } = await createTeamDatabase(admin, name, port);
    return { url };
  } finally {
    await admin.end();
  }
}
