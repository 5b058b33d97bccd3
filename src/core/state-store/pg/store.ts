/** The team store on PostgreSQL: one session, the schema brought up to date, then its ledgers and jobs. */
import type { StateUrl } from '../../../config/state-url.js';
import type { TeamStore } from '../types.js';
import { PgJobState } from './job.js';
import { PgVerificationLedger } from './ledger.js';
import { migrate } from './schema.js';
import { PgSession } from './session.js';

export async function openPgStore(url: StateUrl, host: string): Promise<TeamStore> {
  const session = await PgSession.connect(url, `prospect ${host}`.slice(0, 63));
  try {
    await migrate(session);
  } catch (error) {
    await session.close();
    throw error;
  }
  return {
    shown: url.shown,
    openVerificationLedger: (ledger, options) => PgVerificationLedger.open(session, ledger, { host, ...options }),
    job: (name) => new PgJobState(session, name, host),
    close: () => session.close(),
  };
}
