import { createInterface } from 'node:readline/promises';
import { z } from 'zod';
import { ExitCode, UsageError } from '../../exit-codes.js';
import { selectColumns, type Column } from '../../io/columns.js';
import { checkEmailSyntax, emailKey } from '../../io/emails.js';
import { parseRecords } from '../../io/input/records.js';
import { checkOutputPath, openOutput, resolveFormat } from '../../io/output.js';
import { createRowWriter } from '../../io/writers.js';
import { createApiClient } from '../../runtime/api-client.js';
import { resolveConnection } from '../../runtime/connection.js';
import type { RunContext } from '../../runtime/context.js';
import { failOnInputProblems, readEntriesInput, reportInvalidEntries } from '../entries-input.js';
import { entriesOptions, outputOptions, summaryOption, verifyCacheOptions } from '../job-options.js';
import { mapInOrder } from '../ordered-pool.js';
import { cacheCutoff, openVerifier, openVerifyCache } from '../verification/open-verifier.js';
import { runJob } from './runner.js';

/** `prospect verify`: its flags (the input) and the job's options (the output). */
export const verifyOptionsSchema = z.object({
  ...entriesOptions,
  ...outputOptions,
  ...summaryOption,
  ...verifyCacheOptions,
  emailColumn: z.string().optional(),
  budget: z.number().int().optional(),
  dryRun: z.boolean().default(false),
  yes: z.boolean().default(false),
  confirmOver: z.number().int(),
  concurrency: z.number().int(),
});
export type VerifyFlags = z.input<typeof verifyOptionsSchema>;
type VerifyOptions = z.output<typeof verifyOptionsSchema>;

/** Syntax-check verdict for an address that is never sent. */
export const MALFORMED = 'malformed';

type VerifyRow = Record<string, string | null> & { verification: string; verified_at: string | null };

interface PlannedRow {
  record: Record<string, string>;
  email: string | undefined;
  key: string | undefined;
}

export async function runVerify(ctx: RunContext, flags: VerifyFlags): Promise<number> {
  const startedAt = Date.now();
  const options = verifyOptionsSchema.parse(flags);
  const now = new Date();
  const cacheFreshSince = cacheCutoff(options.cacheTtl, now);
  const format = resolveFormat({ format: options.format, outputPath: options.output, stdoutIsTTY: Boolean(ctx.stdout.isTTY) });
  await checkOutputPath(options.output);
  await checkOutputPath(options.summary);

  const source = await readEntriesInput(ctx, options, 'email');
  const parsed = parseRecords(source.text, { kind: 'email', format: source.format, column: options.emailColumn || undefined });
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
  const summary = {
    command: 'verify',
    parameters: { budget: options.budget ?? null, cache: options.cache, cache_ttl: options.cacheTtl, concurrency: options.concurrency },
    started_at: new Date(startedAt).toISOString(),
    addresses: { rows: planned.rows.length, unique_valid: planned.unique.size, malformed: planned.invalid.length },
    verification: { budget: options.budget ?? null, units_spent: 0, from_cache: 0, unchecked: 0 },
  };

  return runJob(ctx, {
    startedAt,
    progress: 'Verifying',
    output,
    summary: { path: options.summary, record: () => ({ ...summary, verification: { ...summary.verification, ...verifier.snapshot() } }) },
    async work(progress) {
      const results = mapInOrder(planned.rows, options.concurrency * 4, async (row): Promise<VerifyRow> => {
        if (row.key === undefined || row.email === undefined) return { ...row.record, verification: MALFORMED, verified_at: null };
        const outcome = await verifier.verify(row.key, row.email);
        return { ...row.record, verification: outcome.verification, verified_at: outcome.verified_at };
      });
      let done = 0;
      for await (const row of results) {
        await writer.writeRows([row]);
        done += 1;
        progress.update({ done, total: planned.rows.length, noun: 'rows', detail: `${verifier.run.unitsSpent}/${units} units spent` });
      }
      await writer.finish();
      await output.commit();
    },
    close: () => verifier.close(),
    written: () => ({ rows: planned.rows.length, noun: ['row', 'rows'], path: options.output }),
    report() {
      const { units_spent, from_cache, unchecked } = verifier.snapshot();
      ctx.reporter.info(`Verified ${planned.unique.size} unique addresses: ${units_spent} units spent, ${from_cache} from cache${unchecked > 0 ? `, ${unchecked} left unchecked (--budget ${options.budget})` : ''}.`);
    },
  });
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
