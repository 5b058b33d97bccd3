import { SENIORITIES, type Contact, type Seniority } from '../../api/index.js';

/**
 * What a full contacts answer proves. The spec (§4.2) orders contacts most senior first, so an answer
 * cut at the call's limit holds every contact of each asked seniority above the one of its last row;
 * only that seniority and those below it can have been cut. Whether the service keeps that order is
 * checked on every answer: one answer out of order (or a contact without a seniority, which has no
 * place in it) and nothing is taken as proven again for the rest of the run.
 */
export class SeniorityOrder {
  private trusted = true;

  /** False once an answer broke the order: every full answer is then split as if nothing were proven. */
  get isTrusted(): boolean {
    return this.trusted;
  }

  /** Looks at an answer to a call for `asked`; a row out of place withdraws the trust for good. */
  check(rows: readonly Contact[], asked: readonly Seniority[]): void {
    if (!this.trusted) return;
    let previous = -1;
    for (const row of rows) {
      const rank = row.seniority === null ? -1 : SENIORITIES.indexOf(row.seniority);
      if (rank < previous || rank === -1 || !asked.includes(row.seniority!)) {
        this.trusted = false;
        return;
      }
      previous = rank;
    }
  }

  /**
   * The asked seniorities a full answer holds whole: those above its last row's. Undefined when the
   * order is not trusted (call `check` on the answer first).
   */
  provenBy(rows: readonly Contact[], asked: readonly Seniority[]): Seniority[] | undefined {
    if (!this.trusted) return undefined;
    const last = rows.at(-1)?.seniority;
    if (last === undefined || last === null) return [];
    const lastRank = SENIORITIES.indexOf(last);
    return asked.filter((seniority) => SENIORITIES.indexOf(seniority) < lastRank);
  }
}
