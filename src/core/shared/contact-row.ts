import type { Contact, ContactsMeta } from '../../api/index.js';
import type { EmailFreshness } from '../../io/max-age.js';
import type { EmailClass } from './email-class.js';

/** A contact as prospect writes it: the service's record plus freshness, class, verification and source. */
export type ContactRow = Contact & {
  email_age_days: number | null;
  email_freshness: EmailFreshness;
  /** What the address is, judged for free (email-class.ts); '' without one. */
  email_class: EmailClass | '';
  verification: string | null;
  verified_at: string | null;
  source: ContactsMeta['source'] | null;
};
