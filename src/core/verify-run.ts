import { createInterface } from 'node:readline/promises';
import { ExitCode, exitCodeOf, UsageError } from '../exit-codes.js';
import { selectColumns, type Column } from '../io/columns.js';
import { checkEmailSyntax, emailKey } from '../io/emails.js';
import { parseRecords } from '../io/input/records.js';
import { checkOutputPath, openOutput, resolveFormat, type OutputFlags } from '../io/output.js';
import { createRowWriter } from '../io/writers.js';
import { createApiClient } from '../runtime/api-client.js';
import { resolveConnection } from '../runtime/connection.js';
import type { RunContext } from '../runtime/context.js';
import { startProgress } from '../ui/progress.js';
import { failOnInputProblems, readEntriesInput, reportInvalidEntries, type EntriesInput } from './entries-input.js';
import { mapInOrder } from './ordered-pool.js';
import { finishSummary, writeSummary } from './run-summary.js';
import { cacheCutoff, openVerifier, openVerifyCache, type VerifyCacheFlags } from './verifier-setup.js';

export interface VerifyOptions extends EntriesInput, OutputFlags, VerifyCacheFlags {
  emailColumn?: string;
  budget?: number;
  dryRun: boolean;
  yes: boolean;
  confirmOver: number;
  concurrency: number;
  strict: boolean;
}

/** Syntax-check verdict for an address that is never sent. */
export const MALFORMED = 'malformed';

type VerifyRow = Record<string, string | null> & { verification: string; verified_at: string | null };

interface PlannedRow {
  record: Record<string, string>;
  email: string | undefined;
  key: string | undefined;
}

export async function runVerify(ctx: RunContext, options: VerifyOptions): Promise<number> {
  const startedAt = Date.now();
  const now = new Date();
  const cacheFreshSince = cacheCutoff(options.cacheTtl, now);
  const format = resolveFormat({ format: options.format, outputPath: options.output, stdoutIsTTY: Boolean(ctx.stdout.isTTY) });
  await checkOutputPath(options.output);
  await checkOutputPath(options.summary);

  const source = await readEntriesInput(ctx, options, 'email');
  const parsed = parseRecords(source.text, { kind: 'email', ...(source.format ? { format: source.format } : {}), ...(options.emailColumn ? { column: options.emailColumn } : {}) });
  failOnInputProblems(parsed.problems, source.origin);
  if (parsed.column === null) throw new UsageError(`cannot find the email column in ${source.origin}.`, `Columns are: ${parsed.header.join(', ')}; name one with --email-column.`);
  const planned = planRows(parsed.rows, parsed.column);
  reportInvalidEntries(ctx, planned.invalid, 'email', options.strict);
  if (planned.unique.size === 0) throw new UsageError('no valid email address in the input.');
  const columns = selectColumns(verifyColumns(parsed.header), options.columns);

  const connection = await resolveConnection(ctx);
  const cache = openVerifyCache(ctx, connection, { useCache: options.cache, cacheFreshSince });
  const toPay = [...planned.unique].filter((key) => !cache.get(key)).length;
  const units = Math.min(toPay, options.budget ?? Number.POSITIVE_INFINITY);
  if (options.dryRun) {
    cache.close();
    ctx.stdout.write(
      `would spend ${units} unit${units === 1 ? '' : 's'}: ${planned.unique.size} unique valid addresses, ${planned.unique.size - toPay} in the cache, ${planned.invalid.length} malformed (never paid)` +
        (units < toPay ? `, ${toPay - units} left unchecked by --budget ${options.budget}` : '') +
        '.\n',
    );
    return ExitCode.ok;
  }
  await confirmSpend(ctx, options, units);

  const client = createApiClient(ctx, connection);
  const verifier = openVerifier(ctx, client, connection, { useCache: options.cache, cacheFreshSince, budget: options.budget, concurrency: options.concurrency, cache });
  const output = await openOutput(options.output, ctx.stdout);
  const writer = await createRowWriter<VerifyRow>(format, output.sink, { columns, toJson: (row) => row, escapeFormulas: options.escapeFormulas });
  const progress = await startProgress(ctx.reporter, ctx.stderr, `Verifying ${planned.unique.size} addresses…`);
  const summary = {
    command: 'verify',
    parameters: { budget: options.budget ?? null, cache: options.cache, cache_ttl: options.cacheTtl, concurrency: options.concurrency },
    started_at: new Date(startedAt).toISOString(),
    addresses: { rows: planned.rows.length, unique_valid: planned.unique.size, malformed: planned.invalid.length },
    verification: { budget: options.budget ?? null, units_spent: 0, from_cache: 0, unchecked: 0 },
  };
  try {
    const results = mapInOrder(planned.rows, options.concurrency * 4, async (row): Promise<VerifyRow> => {
      if (row.key === undefined || row.email === undefined) return { ...row.record, verification: MALFORMED, verified_at: null };
      const outcome = await verifier.verify(row.key, row.email);
      return { ...row.record, verification: outcome.verification, verified_at: outcome.verified_at };
    });
    let done = 0;
    for await (const row of results) {
      await writer.writeRows([row]);
      done += 1;
      progress.update(`Verified ${done}/${planned.rows.length} rows · ${verifier.run.unitsSpent} units spent`);
    }
    await writer.finish();
    await output.commit();
  } catch (error) {
    progress.stop();
    await output.abort();
    Object.assign(summary.verification, verifier.snapshot());
    await writeSummary(options.summary, finishSummary(summary, startedAt, exitCodeOf(error, ctx.signal), error));
    throw error;
  } finally {
    verifier.close();
  }
  progress.stop();
  Object.assign(summary.verification, verifier.snapshot());
  await writeSummary(options.summary, finishSummary(summary, startedAt, ExitCode.ok));
  const { units_spent, from_cache, unchecked } = summary.verification;
  ctx.reporter.info(`Verified ${planned.unique.size} unique addresses: ${units_spent} units spent, ${from_cache} from cache${unchecked > 0 ? `, ${unchecked} left unchecked (--budget ${options.budget})` : ''}.`);
  return ExitCode.ok;
}

function planRows(rows: ReadonlyArray<{ line: number; record: Record<string, string> }>, emailColumn: string) {
  const invalid: Array<{ line: number; value: string; reason: string }> = [];
  const unique = new Set<string>();
  const planned: PlannedRow[] = rows.map(({ line, record }) => {
    const value = record[emailColumn] ?? '';
    const checked = checkEmailSyntax(value);
    if (!checked.ok) {
      invalid.push({ line, value, reason: checked.reason });
      return { record, email: undefined, key: undefined };
    }
    const key = emailKey(checked.email);
    unique.add(key);
    return { record, email: checked.email, key };
  });
  return { rows: planned, invalid, unique };
}

function verifyColumns(header: readonly string[]): Column<VerifyRow>[] {
  const names = [...header.filter((name) => name !== 'verification' && name !== 'verified_at'), 'verification', 'verified_at'];
  return names.map((name) => ({ name, get: (row: VerifyRow) => row[name] ?? null }));
}

/** A person at a terminal confirms a large spend; a pipe or cron never waits on a prompt. */
async function confirmSpend(ctx: RunContext, options: VerifyOptions, units: number): Promise<void> {
  if (options.yes || units <= options.confirmOver || !ctx.stdin.isTTY || !ctx.stderr.isTTY) return;
  const prompt = createInterface({ input: ctx.stdin, output: ctx.stderr });
  try {
    const answer = await prompt.question(`This run will spend up to ${units} paid units. Continue? [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) throw new UsageError('cancelled; no unit was spent.', 'Add --yes to skip this question, or --budget N to cap the spend.');
  } finally {
    prompt.close();
  }
}
