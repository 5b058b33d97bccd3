/**
 * The team store on PostgreSQL: one session, the schema brought up to date, the team key checked
 * against the one that wrote the database, then its ledgers and jobs.
 */
import type { StateUrl } from '../../../config/state-url.js';
import type { TeamStore } from '../types.js';
import { PgJobState, pgExportsOf } from './job.js';
import { teamJobs } from './jobs.js';
import { PgVerificationLedger } from './ledger.js';
import { checkTeamKey, migrate } from './schema.js';
import { PgSession } from './session.js';
import { PgSnapshotStore } from './snapshots.js';
import { pgSuppressions } from './suppressions.js';
import { TeamKeys } from './team-key.js';

export async function openPgStore(url: StateUrl, host: string, teamKey: string): Promise<TeamStore> {
  const keys = TeamKeys.from(teamKey);
  const session = await PgSession.connect(url, `prospect ${host}`.slice(0, 63));
  try {
    await migrate(session, keys);
    await checkTeamKey(session, keys);
  } catch (error) {
    await session.close();
    throw error;
  }
  return {
    shown: url.shown,
    suppressions: pgSuppressions(session, keys, host),
    openVerificationLedger: (ledger, options) => PgVerificationLedger.open(session, ledger, { host, keys, ...options }),
    job: (name) => new PgJobState(session, name, host, keys),
    snapshots: (name) => new PgSnapshotStore(session, name, host, keys),
    exportsOf: (digest) => pgExportsOf(session, keys, digest),
    jobs: teamJobs(session, host, keys),
    close: () => session.close(),
  };
}
