/** Domains seen whole at a seniority, or resolved alike, before their mean is trusted. */
const LEARNED_AFTER = 20;
/** Rows added to a domain's proven count and to the mean before comparing them (a small count says little). */
const PSEUDO_ROWS = 2;

/** Domains resolved whole, for one seniority index k: those with no contact above k, or some. */
interface RestTally {
  domains: number;
  /** Contacts of these domains above k (zero for the empty-above tally). */
  above: number;
  /** Contacts of these domains at each seniority index from k down. */
  rows: number[];
}

/**
 * Learns how many contacts a domain holds at each asked seniority (indexes into the seniorities asked,
 * most senior first), so that calls are packed close to the limit without filling it (scheduler.ts).
 * Only the number of calls depends on this, never the output.
 */
export class ContactSizing {
  /** Per seniority: contacts and domains of the first calls that showed it whole (fresh domains, unselected). */
  private readonly layerRows: number[];
  private readonly layerDomains: number[];
  /** Per seniority: the most contacts per domain a first call cut there showed at least. */
  private readonly layerAtLeast: number[];
  /** Per seniority index k, from domains resolved whole: what those empty above k, and the others, held below. */
  private readonly emptyAbove: RestTally[];
  private readonly filledAbove: RestTally[];

  constructor(
    private readonly layers: number,
    /** Contacts per domain known beforehand (the service's count of the set), used until learned. */
    private readonly prior?: number,
  ) {
    this.layerRows = new Array<number>(layers).fill(0);
    this.layerDomains = new Array<number>(layers).fill(0);
    this.layerAtLeast = new Array<number>(layers).fill(0);
    const tally = () => ({ domains: 0, above: 0, rows: new Array<number>(layers).fill(0) });
    this.emptyAbove = Array.from({ length: layers }, tally);
    this.filledAbove = Array.from({ length: layers }, tally);
  }

  /** `domains` asked for the first time were answered whole at seniorities `from..to`; `counts` per seniority. */
  learnLayers(domains: number, from: number, to: number, counts: readonly number[]): void {
    for (let layer = from; layer <= to; layer++) {
      this.layerDomains[layer]! += domains;
      this.layerRows[layer]! += counts[layer] ?? 0;
    }
  }

  /** A first call for `domains` was cut at seniority `layer`, where it showed `rows` contacts. */
  learnCut(domains: number, layer: number, rows: number): void {
    this.layerAtLeast[layer] = Math.max(this.layerAtLeast[layer]!, rows / domains);
  }

  /** A domain resolved whole: its contacts at each seniority. */
  learnDomain(counts: readonly number[]): void {
    let above = 0;
    for (let k = 1; k < this.layers; k++) {
      above += counts[k - 1]!;
      const tally = above === 0 ? this.emptyAbove[k]! : this.filledAbove[k]!;
      tally.domains += 1;
      tally.above += above;
      for (let layer = k; layer < this.layers; layer++) tally.rows[layer]! += counts[layer]!;
    }
  }

  /**
   * Contacts expected of a domain never asked, at seniorities `from..to`. A seniority not learned yet is
   * taken to hold at least as many as all those above it together (staff outnumber managers, who
   * outnumber directors), and as many as a cut showed; undefined when nothing is known at all.
   */
  expectedOfNewDomain(from: number, to: number): number | undefined {
    const known = this.layerRows.map((rows, layer) =>
      this.layerDomains[layer]! < LEARNED_AFTER ? undefined : rows / this.layerDomains[layer]!,
    );
    if (known.every((mean) => mean === undefined) && this.layerAtLeast.every((atLeast) => atLeast === 0))
      return this.prior === undefined ? undefined : (this.prior * (to - from + 1)) / this.layers;
    const largest = Math.max(0, ...known.filter((mean) => mean !== undefined));
    let above = 0;
    let sum = 0;
    for (let layer = 0; layer < this.layers; layer++) {
      const guess = known[layer] ?? Math.max(above, largest, this.layerAtLeast[layer]!);
      above += guess;
      if (layer >= from && layer <= to) sum += guess;
    }
    return sum;
  }

  /**
   * Contacts expected at seniorities `from..to` of a domain that holds `kept` contacts above `from`.
   * Learned from the domains resolved so far: what those empty above held, or in proportion to what
   * the others held above; before that, the means scaled by how the domain compares with them.
   */
  expectedBelowKept(kept: number, from: number, to: number): number | undefined {
    const tally = kept === 0 ? this.emptyAbove[from]! : this.filledAbove[from]!;
    if (tally.domains >= LEARNED_AFTER) {
      let rows = 0;
      for (let layer = from; layer <= to; layer++) rows += tally.rows[layer]!;
      return kept === 0 ? rows / tally.domains : (kept * rows) / tally.above;
    }
    const restMean = this.expectedOfNewDomain(from, to);
    const aboveMean = this.expectedOfNewDomain(0, from - 1);
    if (restMean === undefined || aboveMean === undefined) return undefined;
    return (restMean * (kept + PSEUDO_ROWS)) / (aboveMean + PSEUDO_ROWS);
  }
}
