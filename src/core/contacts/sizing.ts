import { SENIORITIES, type Contact, type Seniority } from '../../api/index.js';

export const MAX_DOMAINS_PER_CALL = 100;

/**
 * Calls that ask again for what a full answer left are sized to be answered whole: filled to this
 * share of the limit at the contacts expected. Below 1 because contacts per domain are heavy-tailed,
 * so a call sized to the mean often holds more. Chosen on the bench's sets (BENCHMARKS.md section 3).
 */
const FILL = 0.8;
/**
 * A batch of new domains is sized to twice the limit at the mean: most come back full, and keep what
 * the order proves (contacts/proofs.ts), which tells the calls that follow how large each domain is; a
 * batch sized to fit would mostly come back far from full, and cost more calls.
 */
const FIRST_FILL = 2;
const SENIORITY_COUNT = SENIORITIES.length;
/** Domains answered whole at a seniority before its mean per domain is trusted. */
const LEARNED_AFTER = 20;

/**
 * Learns how many contacts a domain has at each seniority, from every contact a call proved complete,
 * so that later calls are sized to come close to the limit without filling it. Only the number of
 * calls depends on this, never the output.
 */
export class ContactSizing {
  private readonly domains = new Map<Seniority, number>();
  private readonly contacts = new Map<Seniority, number>();
  /** Per seniority, the most contacts per domain a cut answer proved at least (its rows of the seniority it was cut in). */
  private readonly atLeast = new Map<Seniority, number>();

  constructor(
    private readonly limit: number,
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
   * A first guess for a new batch, before every seniority is learned: a seniority not learned yet is
   * taken to hold as many as the largest known (or as a cut answer proved at least); undefined when
   * nothing is known at all.
   */
  private guessPerDomain(seniorities: readonly Seniority[]): number | undefined {
    const known = seniorities.map((seniority) => this.mean(seniority));
    const largest = Math.max(0, ...known.filter((mean) => mean !== undefined), ...this.atLeast.values());
    if (largest === 0 && known.every((mean) => mean === undefined))
      return this.prior === undefined ? undefined : (this.prior * seniorities.length) / SENIORITY_COUNT;
    return seniorities.reduce(
      (sum, seniority, index) => sum + (known[index] ?? Math.max(largest, this.atLeast.get(seniority) ?? 0)),
      0,
    );
  }

  /** Domains of a new batch: as many as fill FIRST_FILL of the limit at the mean, at most 100. */
  batchSize(seniorities: readonly Seniority[]): number {
    const perDomain = this.guessPerDomain(seniorities);
    if (perDomain === undefined || perDomain === 0) return MAX_DOMAINS_PER_CALL;
    return clamp(Math.floor((FIRST_FILL * this.limit) / perDomain), 1, MAX_DOMAINS_PER_CALL);
  }

  /**
   * Calls for the seniorities `rest` of these domains, whose seniorities `proven` came back whole with
   * `provenRows`: the mean per domain scaled by how these domains compare with it where they are known.
   * At least `atLeast` (a split always asks in two or more parts).
   */
  partsFor(
    domains: number,
    rest: readonly Seniority[],
    proven: readonly Seniority[],
    provenRows: number,
    atLeast: number,
  ): number {
    const restPerDomain = this.guessPerDomain(rest);
    if (restPerDomain === undefined) return Math.min(atLeast, domains);
    const provenPerDomain = proven.length > 0 ? this.guessPerDomain(proven) : undefined;
    // Where the proven seniorities say these domains are larger (or smaller) than most, the rest is too.
    const scale = provenPerDomain ? (provenRows / domains + provenPerDomain) / (2 * provenPerDomain) : 1;
    const expected = domains * restPerDomain * scale;
    return clamp(Math.ceil(expected / (FILL * this.limit)), atLeast, domains);
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(Math.max(value, min), max);
}
