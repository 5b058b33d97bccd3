import { SENIORITIES, type Contact, type Seniority } from '../../api/index.js';

export const MAX_DOMAINS_PER_CALL = 100;

const SENIORITY_COUNT = SENIORITIES.length;
/** Domains answered whole at a seniority before its mean per domain is trusted. */
const LEARNED_AFTER = 20;

/**
 * Learns how many contacts a domain has at each seniority, from every contact a call proved complete,
 * so that later calls are packed close to the limit without filling it (scheduler.ts). Only the number of
 * calls depends on this, never the output.
 */
export class ContactSizing {
  private readonly domains = new Map<Seniority, number>();
  private readonly contacts = new Map<Seniority, number>();
  /** Per seniority, the most contacts per domain a cut answer proved at least (its rows at the seniority cut). */
  private readonly atLeast = new Map<Seniority, number>();

  constructor(
    /** Contacts per domain known beforehand (the service's count of the set), used until learned. */
    private readonly prior?: number,
  ) {}

  /** `domains` answered whole at `seniorities`: `rows` are all their contacts there. */
  learn(domains: number, seniorities: readonly Seniority[], rows: readonly Contact[]): void {
    for (const seniority of seniorities) {
      this.domains.set(seniority, (this.domains.get(seniority) ?? 0) + domains);
      this.contacts.set(
        seniority,
        (this.contacts.get(seniority) ?? 0) + rows.filter((row) => row.seniority === seniority).length,
      );
    }
  }

  /** A cut answer for `domains` held `rows` contacts of `seniority`, the one it was cut in. */
  learnCut(domains: number, seniority: Seniority, rows: number): void {
    this.atLeast.set(seniority, Math.max(this.atLeast.get(seniority) ?? 0, rows / domains));
  }

  private mean(seniority: Seniority): number | undefined {
    const domains = this.domains.get(seniority) ?? 0;
    return domains < LEARNED_AFTER ? undefined : this.contacts.get(seniority)! / domains;
  }

  /**
   * Contacts expected of a domain at these seniorities. A seniority not learned yet is taken to hold
   * at least as many as all those above it together (staff outnumber managers, who outnumber
   * directors), and as many as a cut answer proved; undefined when nothing is known at all.
   */
  perDomain(seniorities: readonly Seniority[]): number | undefined {
    const known = SENIORITIES.map((seniority) => this.mean(seniority));
    if (known.every((mean) => mean === undefined) && this.atLeast.size === 0)
      return this.prior === undefined ? undefined : (this.prior * seniorities.length) / SENIORITY_COUNT;
    const largest = Math.max(0, ...known.filter((mean) => mean !== undefined));
    let above = 0;
    let sum = 0;
    SENIORITIES.forEach((seniority, index) => {
      const guess = known[index] ?? Math.max(above, largest, this.atLeast.get(seniority) ?? 0);
      above += guess;
      if (seniorities.includes(seniority)) sum += guess;
    });
    return sum;
  }
}
