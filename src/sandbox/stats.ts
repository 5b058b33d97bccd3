/** Counters behind GET /_sandbox/stats: requests by endpoint and verify units by plan. */
import type { Plan } from './auth.js';

export type Endpoint = 'companies' | 'contacts' | 'verify' | 'other';

export interface SandboxStats {
  requests: { total: number; companies: number; contacts: number; verify: number; other: number };
  units: { free: number; starter: number; growth: number; scale: number };
}

export class StatsCounter {
  private readonly state: SandboxStats = {
    requests: { total: 0, companies: 0, contacts: 0, verify: 0, other: 0 },
    units: { free: 0, starter: 0, growth: 0, scale: 0 },
  };

  countRequest(endpoint: Endpoint): void {
    this.state.requests.total++;
    this.state.requests[endpoint]++;
  }

  /** Charges one verify unit to the plan; returns the plan's units used so far. */
  chargeUnit(plan: Plan): number {
    return ++this.state.units[plan];
  }

  snapshot(): SandboxStats {
    return { requests: { ...this.state.requests }, units: { ...this.state.units } };
  }
}
