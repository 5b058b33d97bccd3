/**
 * A paying run that is capped, or that asks first, plans its spend over all its addresses before the
 * first paid call: the budget goes to the addresses confirmed longest ago (oldest first), and the
 * question shows the exact count, not the few found so far. `contacts` and `pipeline` keep their
 * rows, unverified, in a spool (RowSpool) while the free calls run, plan here, then verify and
 * write the rows in their order; `verify` plans over its input read once.
 */
import { createReadStream } from 'node:fs';
import { UsageError } from '../../exit-codes.js';
import { emailKey } from '../../io/emails.js';
import { linesOf } from '../../io/input/stream.js';
import { runTempFile } from '../../io/run-temp-file.js';
import { createRowWriter, type RowWriter } from '../../io/writers.js';
import type { RunContext } from '../../runtime/context.js';
import type { ContactRow } from '../shared/contact-row.js';
import { mapInOrder } from '../../util/ordered-pool.js';
import { AppendOnlyFile } from '../../io/append-only-file.js';
import type { SpendConsent } from './consent.js';
import type { Verifier } from './verifier.js';

/**
 * Addresses that are stale, or whose age nobody knows, are the ones worth a paid check; a disposable
 * one never is (its class says all a check would).
 */
export function needsVerification(row: ContactRow): row is ContactRow & { business_email: string } {
  const old = row.email_freshness === 'stale' || row.email_freshness === 'unknown';
  return old && Boolean(row.business_email) && row.email_class !== 'disposable';
}

/**
 * The addresses a short budget pays for: the longest unconfirmed first (no date at all before the
 * oldest date: nothing says it was ever confirmed), then in input order.
 */
export function oldestFirst(
  keys: readonly string[],
  lastSeen: ReadonlyMap<string, string>,
  budget: number | undefined,
): Set<string> {
  if (budget === undefined || budget >= keys.length) return new Set(keys);
  const age = (key: string) => lastSeen.get(key) ?? '';
  const ranked = keys
    .map((key, index) => ({ key, index }))
    .sort((a, b) => age(a.key).localeCompare(age(b.key)) || a.index - b.index);
  return new Set(ranked.slice(0, Math.max(0, budget)).map(({ key }) => key));
}

/**
 * Reads the spooled rows once: the distinct addresses to check, and which of them a result is known
 * for already; then asks (on a terminal, without --yes) with the exact count, and gives the verifier
 * the addresses its budget (or the cap typed at the question) pays for, oldest first.
 */
export async function planSpend(
  rows: AsyncIterable<ContactRow>,
  verifier: Verifier,
  consent: SpendConsent,
  suspend: <T>(during: () => Promise<T>) => Promise<T>,
): Promise<void> {
  const lastSeen = new Map<string, string>();
  const toPay: string[] = [];
  const seen = new Set<string>();
  for await (const row of rows) {
    if (!needsVerification(row)) continue;
    const key = emailKey(row.business_email);
    if (seen.has(key)) continue;
    seen.add(key);
    if (verifier.isKnown(key)) continue;
    toPay.push(key);
    if (row.business_email_last_seen) lastSeen.set(key, row.business_email_last_seen);
  }
  // A resumed run has spent part of its budget already, on the oldest addresses its first part planned
  // (and its lost answers may have cost more).
  const spent = verifier.run.unitsSpent + verifier.run.mayAlsoHaveCost;
  const left = (budget: number | undefined) => (budget === undefined ? undefined : Math.max(0, budget - spent));
  const budgetLeft = spent > 0 ? left(consent.budget) : undefined;
  const typedCap =
    toPay.length === 0
      ? undefined
      : await suspend(() =>
          consent.confirm({ addresses: seen.size, alreadyPaid: seen.size - toPay.length, budgetLeft }),
        );
  const budget = typedCap === undefined ? consent.budget : Math.min(typedCap, consent.budget ?? typedCap);
  if (typedCap !== undefined) verifier.run.budget = budget!;
  verifier.payOnly(oldestFirst(toPay, lastSeen, left(budget)));
}

/**
 * Each row as it is written: its address verified (or left unchecked by the plan), in the rows'
 * order. `progress` hears of each row handed on (the paid calls are the slow part of such a run).
 */
export async function* verifiedInOrder<Row extends ContactRow>(
  rows: AsyncIterable<Row>,
  verifier: Verifier,
  window: number,
  progress?: (rowsDone: number) => void,
): AsyncGenerator<Row> {
  let done = 0;
  for await (const row of mapInOrder(rows, window, async (row) => {
    if (!needsVerification(row)) return row;
    const outcome = await verifier.verify(emailKey(row.business_email), row.business_email);
    return { ...row, verification: outcome.verification, verified_at: outcome.verified_at };
  })) {
    yield row;
    progress?.((done += 1));
  }
}

/**
 * Rows kept on disk between the free calls and the paid ones, one JSON object a line, so memory
 * holds the distinct addresses only (planSpend), not the rows. A pipeline with --state keeps them in
 * its state (current/output: a resume reads them again); otherwise a temporary file, removed at the end.
 */
export class RowSpool<Row> {
  private constructor(
    readonly file: AppendOnlyFile,
    readonly path: string,
    readonly writer: RowWriter<Row>,
  ) {}

  static async over<Row>(file: AppendOnlyFile, path: string): Promise<RowSpool<Row>> {
    return new RowSpool(
      file,
      path,
      await createRowWriter<Row>('ndjson', file, { columns: [], toJson: (row) => row, escapeFormulas: false }),
    );
  }

  /** A spool in a temporary file of this run, removed when the run ends (or by a signal handler). */
  static async temporary<Row>(ctx: RunContext): Promise<RowSpool<Row>> {
    const opened: { file?: AppendOnlyFile } = {};
    const path = runTempFile(
      'rows',
      (task) => ctx.onCleanup(task),
      async () => opened.file?.close(),
    );
    opened.file = await AppendOnlyFile.open(path, 0);
    return RowSpool.over(opened.file, path);
  }

  /** The rows written so far (up to the file's committed length), in their order. */
  async *rows(): AsyncGenerator<Row> {
    if (this.file.bytes === 0) return;
    let line = 0;
    for await (const text of linesOf(createReadStream(this.path, { encoding: 'utf8', end: this.file.bytes - 1 }))) {
      line += 1;
      yield parseRow<Row>(text, this.path, line);
    }
  }
}

/** A spooled row read back: a JSON object, or the spool is damaged (a state directory edited by hand). */
function parseRow<Row>(text: string, path: string, line: number): Row {
  let row: unknown;
  try {
    row = JSON.parse(text);
  } catch {
    row = undefined;
  }
  if (typeof row !== 'object' || row === null || typeof (row as { domain?: unknown }).domain !== 'string') {
    throw new UsageError(
      `${path} line ${line} is damaged: it is not a row prospect wrote.`,
      'Remove the unfinished run (the current folder of the --state directory) to start over; ' +
        'paid verifications are kept.',
    );
  }
  return row as Row;
}
