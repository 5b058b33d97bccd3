/**
 * GET /api/v1/contacts (spec §4.2, contract rows 18-21). Checks run in this order: authentication (by the
 * server), then the plan (403 before any parameter is looked at), then the parameters.
 */
import { SENIORITIES, type Contact, type Seniority } from './dataset/contacts.js';
import { CONTACT_PLANS } from './auth.js';
import type { ContactStore } from './contact-store.js';
import { isDomain } from './domains.js';
import { ApiError, invalidParameter, missingParameter } from './errors.js';
import { integerParameter, singleValues, truncate } from './query.js';
import type { StatsCounter } from './stats.js';
import type { ApiRequest, Reply, Route } from './types.js';

const CONTACT_SOURCE = {
  dataset: 'Licensed contact records',
  method: 'licensed',
  publisher: 'prospect sandbox (synthetic data)',
  license: 'Synthetic records for testing; no real person is described.',
} as const;

const PARAMETERS = ['domain', 'seniority', 'limit'] as const;
const MAX_DOMAINS = 100;
const DEFAULT_CONTACT_LIMIT = 200;
const MAX_CONTACT_LIMIT = 1000;

export function contactsRoute(store: ContactStore, stats: StatsCounter): Route {
  return (request: ApiRequest): Reply => {
    if (!CONTACT_PLANS.has(request.plan)) {
      throw new ApiError(
        403,
        'plan_required',
        `Contacts are available from the Growth plan upward; this key is on the ${capitalized(request.plan)} plan.`,
        {
          required_plan: 'growth',
        },
      );
    }
    const params = singleValues(request.query, PARAMETERS);
    const domains = parseDomains(params.domain);
    const seniorities = parseSeniorities(params.seniority);
    const limit = integerParameter('limit', params.limit, 1, MAX_CONTACT_LIMIT, DEFAULT_CONTACT_LIMIT);
    stats.countContactsDomains(domains);
    return {
      status: 200,
      body: {
        data: orderedContacts(store, domains, seniorities).slice(0, limit),
        meta: { source: CONTACT_SOURCE, domains_requested: domains.length, limit },
        next_cursor: null,
      },
    };
  };
}

/**
 * Contract row 20: most senior first; within a seniority, contacts with an e-mail first; then the order
 * of the domains in the request; then record order. Filling ten buckets in domain and record order and
 * concatenating them gives exactly that order, in linear time.
 */
function orderedContacts(
  store: ContactStore,
  domains: readonly string[],
  seniorities: ReadonlySet<Seniority> | undefined,
): Contact[] {
  const buckets: Contact[][] = Array.from({ length: SENIORITIES.length * 2 }, () => []);
  for (const domain of domains) {
    for (const contact of store.forDomain(domain).contacts) {
      if (seniorities && !seniorities.has(contact.seniority)) continue;
      const bucket = SENIORITIES.indexOf(contact.seniority) * 2 + (contact.business_email === null ? 1 : 0);
      (buckets[bucket] as Contact[]).push(contact);
    }
  }
  return buckets.flat();
}

/** 1 to 100 distinct domains after trimming and lower-casing, in request order (contract row 21). */
function parseDomains(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') throw missingParameter('domain');
  const domains = [...new Set(raw.split(',').map((d) => d.trim().toLowerCase()))];
  if (domains.length > MAX_DOMAINS) {
    throw new ApiError(
      400,
      'too_many_domains',
      `At most ${MAX_DOMAINS} domains per call; this one has ${domains.length}. Split the list.`,
      {
        parameter: 'domain',
        max: MAX_DOMAINS,
      },
    );
  }
  for (const domain of domains) {
    if (!isDomain(domain))
      throw invalidParameter(
        'domain',
        `'${truncate(domain)}' is not a domain (expected a host name such as acme.com).`,
      );
  }
  return domains;
}

function parseSeniorities(raw: string | undefined): ReadonlySet<Seniority> | undefined {
  if (raw === undefined) return undefined;
  const values = raw.split(',').map((s) => s.trim().toLowerCase());
  for (const value of values) {
    if (!(SENIORITIES as readonly string[]).includes(value)) {
      throw invalidParameter(
        'seniority',
        `'${truncate(value)}' is not a seniority. Valid values: ${SENIORITIES.join(', ')}.`,
        {
          valid_values: SENIORITIES,
        },
      );
    }
  }
  return new Set(values as Seniority[]);
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
