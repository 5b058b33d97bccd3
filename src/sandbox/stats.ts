/**
 * Counters behind GET /_sandbox/stats: requests by endpoint, verify units by plan, injected faults by
 * kind, and, when the sandbox records its traffic (`--record-traffic`), which domains /contacts was
 * asked for and which addresses a unit was charged for (so a test can prove that an excluded company
 * or address never reached the service). Recording is opt-in because those sets grow with every call:
 * hundreds of thousands of strings over a 1,000,000-company run, and megabytes in each stats answer.
 */
import type { Plan } from './auth.js';
import { FAULT_KIND_NAMES, LATENCY_SPIKE, type FaultKindName } from './fault-kinds.js';

export type Endpoint = 'companies' | 'countries' | 'contacts' | 'verify' | 'other';

/** Every fault kind, and the latency spikes, always present (0 when none happened). */
export type FaultCounts = Record<FaultKindName | typeof LATENCY_SPIKE, number>;

export interface SandboxStats {
  /** Which service this is: the dataset's seed and size decide every answer, whatever the port. */
  identity: string;
  requests: { total: number; companies: number; countries: number; contacts: number; verify: number; other: number };
  /** Rows in the `data` of the answers sent: what a client made the service build and send. */
  rows: { companies: number; contacts: number };
  units: { free: number; starter: number; growth: number; scale: number };
  faults: FaultCounts;
  /** Requests refused with 429 by --rate-limit (not the injected `429` faults, counted in `faults`). */
  rate_limited: number;
  /** With --record-traffic: every domain any /contacts call carried, distinct and sorted. */
  contacts_domains?: string[];
  /** With --record-traffic: every address a verify unit was charged for (lower-cased), distinct and sorted. */
  verified_emails?: string[];
}

/**
 * The sandbox's identity as a paying client keys its ledger of paid results: two sandboxes with the
 * same seed and size give the same verify answers, so they are one service, whatever their port.
 */
export function sandboxIdentity(seed: number, companies: number): string {
  return `prospect-sandbox:seed=${seed}:companies=${companies}`;
}

export class StatsCounter {
  /** The traffic kept for the stats' lists; undefined when the sandbox does not record it. */
  private readonly traffic: { contactsDomains: Set<string>; verifiedEmails: Set<string> } | undefined;

  constructor(
    private readonly identity: string,
    recordTraffic = false,
  ) {
    this.traffic = recordTraffic ? { contactsDomains: new Set(), verifiedEmails: new Set() } : undefined;
  }

  private readonly state: Omit<SandboxStats, 'identity' | 'contacts_domains' | 'verified_emails'> = {
    requests: { total: 0, companies: 0, countries: 0, contacts: 0, verify: 0, other: 0 },
    rows: { companies: 0, contacts: 0 },
    units: { free: 0, starter: 0, growth: 0, scale: 0 },
    faults: zeroFaultCounts(),
    rate_limited: 0,
  };

  countRequest(endpoint: Endpoint): void {
    this.state.requests.total++;
    this.state.requests[endpoint]++;
  }

  countRows(endpoint: Endpoint, rows: number): void {
    if (endpoint === 'companies' || endpoint === 'contacts') this.state.rows[endpoint] += rows;
  }

  /** The domains of one /contacts call that was answered. */
  countContactsDomains(domains: readonly string[]): void {
    if (this.traffic) for (const domain of domains) this.traffic.contactsDomains.add(domain);
  }

  /** Charges one verify unit to the plan for `address`; returns the plan's units used so far. */
  chargeUnit(plan: Plan, address: string): number {
    this.traffic?.verifiedEmails.add(address);
    return ++this.state.units[plan];
  }

  countRateLimited(): void {
    this.state.rate_limited++;
  }

  countFault(kind: FaultKindName | typeof LATENCY_SPIKE): void {
    this.state.faults[kind]++;
  }

  snapshot(): SandboxStats {
    return {
      identity: this.identity,
      requests: { ...this.state.requests },
      rows: { ...this.state.rows },
      units: { ...this.state.units },
      faults: { ...this.state.faults },
      rate_limited: this.state.rate_limited,
      ...(this.traffic && {
        contacts_domains: [...this.traffic.contactsDomains].sort(),
        verified_emails: [...this.traffic.verifiedEmails].sort(),
      }),
    };
  }
}

function zeroFaultCounts(): FaultCounts {
  const counts = {} as FaultCounts;
  for (const name of FAULT_KIND_NAMES) counts[name] = 0;
  counts[LATENCY_SPIKE] = 0;
  return counts;
}
