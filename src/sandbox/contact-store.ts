/**
 * Contacts of recently asked domains. Contacts are generated on demand; a client typically asks for the
 * same domains again (split batches, retries, verify after contacts), so the last few are kept.
 */
import type { Contact } from './dataset/contacts.js';
import type { Dataset } from './dataset/dataset.js';

const CACHED_DOMAINS = 512;

export interface DomainContacts {
  readonly contacts: readonly Contact[];
  /** business_email (lower-case) → contact. */
  readonly byEmail: ReadonlyMap<string, Contact>;
}

const NONE: DomainContacts = { contacts: [], byEmail: new Map() };

export class ContactStore {
  private readonly cache = new Map<string, DomainContacts>();

  constructor(
    private readonly dataset: Dataset,
    private readonly asOf: string,
  ) {}

  /** The domain's contacts in record order; none for a domain the dataset does not know. */
  forDomain(domain: string): DomainContacts {
    const hit = this.cache.get(domain);
    if (hit) return hit;
    const i = this.dataset.companyIndex(domain);
    if (i === undefined || this.dataset.contactCounts[i] === 0) return NONE;
    const contacts = this.dataset.contactsOf(i, this.asOf);
    const byEmail = new Map<string, Contact>();
    for (const c of contacts) if (c.business_email) byEmail.set(c.business_email.toLowerCase(), c);
    const entry = { contacts, byEmail };
    this.cache.set(domain, entry);
    if (this.cache.size > CACHED_DOMAINS) this.cache.delete(this.cache.keys().next().value as string);
    return entry;
  }
}
