import type { Contact, ContactsMeta } from '../../api/index.js';
import type { EmailFreshness } from '../../io/max-age.js';

/** A contact as prospect writes it: the service's record plus freshness, verification and source. */
export type ContactRow = Contact & {
  email_age_days: number | null;
  email_freshness: EmailFreshness;
  verification: string | null;
  verified_at: string | null;
  source: ContactsMeta['source'] | null;
};
