import { z } from 'zod';
import { ExitCode, UsageError } from '../../exit-codes.js';
import { selectColumns, type Column } from '../../io/columns.js';
import { checkEmailSyntax, emailKey } from '../../io/emails.js';
import type { InvalidEntry } from '../../io/input/entries.js';
import type { InputProblem, ParseOptions } from '../../io/input/model.js';
import { streamRows, type RowStream } from '../../io/input/stream.js';
import { resolveFormat } from '../../io/output.js';
import type { RunContext } from '../../runtime/context.js';
import type { JobDeps } from '../../runtime/job-deps.js';
import { entryPlace } from '../../io/input/entries.js';
import { failOnInputProblems, openRereadableInput, reportInvalidEntries, SHOWN_INVALID } from '../shared/input.js';
import type { InputStream } from '../../io/input/source.js';
import { VERIFY_FLAGS } from '../../options/command-flags.js';
import { flagShape } from '../shared/flags.js';
import { runRecord } from '../shared/provenance.js';
import { Exclusions } from '../shared/exclusion.js';
import { loadSuppression } from '../suppression/suppression.js';
import { mapInOrder } from '../../util/ordered-pool.js';
import { keptItems } from '../../util/async-iterables.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import type { VerificationLedger } from '../state-store/types.js';
import { SpendConsent } from './consent.js';
import { cacheCutoff, openVerificationLedger, openVerifier, type OpenedVerifier } from './open-verifier.js';
import { oldestFirst } from './spend-plan.js';
import { reportVerification } from './report.js';
import { checkRunFiles, rowFile, runRowJob } from '../shared/runner.js';
import { verificationEnding } from './refusal.js';
import { emailClass, emailClassText, newEmailClassCounts, type EmailClass } from '../shared/email-class.js';

/** `prospect verify`: its flags (the input) and the job's options (the output). */
const verifyOptionsSchema = z.object({ ...flagShape(VERIFY_FLAGS), args: z.array(z.string()) });
export type VerifyFlags = z.input<typeof verifyOptionsSchema>;

/** Syntax-check verdict for an address that is never sent. */
const MALFORMED = 'malformed';

type VerifyRow = Record<string, string | null> & {
  verification: string;
  verified_at: string | null;
  email_class: EmailClass | '';
};

interface PlannedRow {
  record: Record<string, string>;
  email: string | undefined;
  key: string | undefined;
  /** No address at all (a contact without a business email): nothing to check, not malformed. */
  blank?: boolean;
}

/** The service's answers, as an input's `verification` column may hold them from an earlier run. */
const SERVICE_STATUSES = new Set(['valid', 'invalid', 'risky', 'unknown']);

export async function runVerify(ctx: RunContext, flags: VerifyFlags, deps: JobDeps): Promise<number> {
  const startedAt = Date.now();
  const options = verifyOptionsSchema.parse(flags);
  const cacheFreshSince = cacheCutoff(options.cacheTtl, deps.now());
  const format = resolveFormat({
    format: options.format,
    outputPath: options.output,
    stdoutIsTTY: Boolean(ctx.stdout.isTTY),
    bom: options.bom,
  });
  await checkRunFiles(options);
  const exclusions = await Exclusions.load(ctx, options, { domains: false, emails: true }, await loadSuppression(ctx));
  const input = await readVerifyInput(ctx, options, exclusions);
  const { planned } = input;
  const connection = await deps.connection();
  const ledger = await openVerificationLedger(ctx, connection, { useCache: options.cache, cacheFreshSince });
  if (options.cache) rememberInputResults(ledger, planned.verifiedInInput, cacheFreshSince);
  const spend = await decideSpend(ctx, options, planned, ledger);
  if (spend === undefined) return ExitCode.ok;
  const verifier = await openVerifier(ctx, deps.paidClient(connection), connection, {
    useCache: options.cache,
    cacheFreshSince,
    budget: spend.budget,
    concurrency: options.concurrency,
    ledger,
  });
  verifier.payOnly(spend.payable);
  const record = () => verifyRecord(options, planned, spend.budget, verifier, exclusions, startedAt);

  return runRowJob<VerifyRow>(ctx, {
    startedAt,
    progress: 'Verifying',
    file: rowFile(options, format, input.columns),
    summary: { path: options.summary, record },
    async work(writer, progress) {
      let done = 0;
      for await (const row of await verifiedRows(input, options.concurrency, verifier, exclusions)) {
        await writer.writeRows([row]);
        done += 1;
        progress.update({
          done,
          total: planned.rows,
          noun: 'rows',
          detail: `${formatCount(verifier.run.unitsSpent)}/${countOf(spend.payable.size, 'unit')} spent`,
        });
      }
      return undefined;
    },
    // A paid call already sent is let finish and kept in the verification ledger: a second run must
    // not pay for it again.
    onFailure: () => verifier.settle(),
    endsWith: () => verificationEnding(verifier),
    close: () => verifier.close(),
    written: () => ({ rows: planned.rows, noun: ['row', 'rows'], path: options.output }),
    report() {
      reportVerification(ctx, verifier.snapshot());
      reportClasses(ctx, planned);
      exclusions.report(ctx, { emails: ['address', 'addresses'] });
    },
  });
}

type VerifyOptions = z.output<typeof verifyOptionsSchema>;
type PlannedInput = Awaited<ReturnType<typeof planInput>>;

/** The input, read once to plan: where it is, how it parses, what it holds. */
interface VerifyInput {
  source: InputStream;
  parseOptions: ParseOptions;
  planned: PlannedInput;
  emailColumn: string;
  columns: Column<VerifyRow>[];
}

/**
 * The budget goes to the oldest addresses of the whole input, and the spend is confirmed for all
 * of it: verify plans the whole input before its first call, then reads it again to work on it
 * (standard input through a temporary file). Memory holds the distinct addresses, not the rows.
 */
async function readVerifyInput(ctx: RunContext, options: VerifyOptions, exclusions: Exclusions) {
  const source = await openRereadableInput(ctx, options, 'email');
  const parseOptions: ParseOptions = {
    kind: 'email',
    format: source.format,
    origin: source.origin,
    column: options.emailColumn || undefined,
    columnFlag: '--email-column',
  };
  const problems = { shown: [] as InputProblem[], count: 0 };
  const planned = await planInput(
    await streamRows(source.open(), parseOptions, {
      problem(problem) {
        problems.count += 1;
        if (problems.shown.length < SHOWN_INVALID) problems.shown.push(problem);
      },
      blank() {},
    }),
    // Where a row is accepted: an excluded address is not planned, so it is never paid for, estimated or written.
    (email) => exclusions.keepsEmail(email),
  );
  failOnInputProblems(problems.shown, source.origin, problems.count);
  const emailColumn = planned.column;
  if (emailColumn === null)
    throw new UsageError(
      `cannot find the email column in ${source.origin}.`,
      `Columns are: ${planned.header.join(', ')}; name one with --email-column.`,
    );
  const place = entryPlace(source.origin);
  reportInvalidEntries(ctx, planned.invalid, 'email', options.strict, planned.invalidCount, place);
  if (planned.unique.size === 0 && planned.disposable.size === 0) throw nothingToVerify(exclusions.removed);
  const columns = selectColumns(verifyColumns(planned.header), options.columns);
  return { source, parseOptions, planned, emailColumn, columns } satisfies VerifyInput;
}

function nothingToVerify(removed: { emails: number; suppressed: number }): UsageError {
  const total = removed.emails + removed.suppressed;
  if (total === 0) return new UsageError('no valid email address in the input.');
  const addresses = countOf(total, 'address', 'addresses');
  const where = [
    removed.emails > 0 ? 'on --exclude-emails' : '',
    removed.suppressed > 0 ? 'suppressed by prospect forget' : '',
  ].filter(Boolean);
  const are = total === 1 ? 'is' : 'are';
  return new UsageError(`no address is left to verify: ${addresses} of the input ${are} ${where.join(' or ')}.`);
}

/**
 * What the run may spend, and on which addresses: the consent, the cap (flag, config, or typed at
 * the question), the oldest addresses first. --dry-run says it and resolves to undefined.
 */
async function decideSpend(ctx: RunContext, options: VerifyOptions, planned: PlannedInput, ledger: VerificationLedger) {
  const consent = await SpendConsent.decide(ctx, { yes: options.yes, budget: options.verifyBudget ?? options.budget });
  let budget = consent.budget;
  const toPay = [...planned.unique].filter((key) => !ledger.get(key));
  let payable = oldestFirst(toPay, planned.lastSeen, budget);
  if (options.dryRun) {
    ledger.close();
    ctx.stdout.write(dryRunText(planned, toPay.length, payable.size, budget));
    return undefined;
  }
  if (payable.size > 0) {
    consent.assertMayPay('verify');
    const typedCap = await consent.confirm(
      { addresses: planned.unique.size, alreadyPaid: planned.unique.size - toPay.length },
      options.confirmOver,
    );
    if (typedCap !== undefined) {
      budget = Math.min(typedCap, budget ?? typedCap);
      payable = oldestFirst(toPay, planned.lastSeen, budget);
    }
  }
  return { budget, payable };
}

function dryRunText(planned: PlannedInput, toPay: number, units: number, budget: number | undefined): string {
  const unique = countOf(planned.unique.size, 'unique valid address', 'unique valid addresses');
  const unchecked = units < toPay ? `, ${toPay - units} left unchecked by the budget of ${budget}` : '';
  return (
    `would spend ${countOf(units, 'unit')}: ${unique}, ${formatCount(planned.unique.size - toPay)} already paid for, ` +
    `${formatCount(planned.invalidCount)} malformed (never paid)${unchecked}.\n`
  );
}

/** The input read again with the format and column the plan found (its problems were fatal then), verified in order. */
async function verifiedRows(
  input: VerifyInput,
  concurrency: number,
  verifier: OpenedVerifier,
  exclusions: Exclusions,
): Promise<AsyncIterable<VerifyRow>> {
  const { emailColumn } = input;
  const again = await streamRows(
    input.source.open(),
    { ...input.parseOptions, format: input.planned.format, column: emailColumn },
    { problem() {}, blank() {} },
  );
  // The rows planned: the excluded ones are left out again, without counting them twice.
  const kept = keptItems(again.rows, (row) => exclusions.keepsEmail(row.record[emailColumn], false));
  return mapInOrder(kept, concurrency * 4, async ({ record }): Promise<VerifyRow> => {
    const row = planRow(record, emailColumn);
    if (row.key === undefined || row.email === undefined)
      return { ...row.record, verification: row.blank ? '' : MALFORMED, verified_at: null, email_class: '' };
    const email_class = classOf(row);
    // A disposable address is judged by its class: never sent, never paid for.
    if (email_class === 'disposable') return { ...row.record, verification: '', verified_at: null, email_class };
    const outcome = await verifier.verify(row.key, row.email);
    return { ...row.record, verification: outcome.verification, verified_at: outcome.verified_at, email_class };
  });
}

function verifyRecord(
  options: VerifyOptions,
  planned: PlannedInput,
  budget: number | undefined,
  verifier: OpenedVerifier,
  exclusions: Exclusions,
  startedAt: number,
) {
  const verification = { budget: budget ?? null, units_spent: 0, from_cache: 0, unchecked: 0 };
  return runRecord({
    command: 'verify',
    parameters: {
      budget: budget ?? null,
      cache: options.cache,
      cache_ttl: options.cacheTtl,
      concurrency: options.concurrency,
      ...exclusions.parameters(),
    },
    startedAt,
    output: options.output,
    rows: planned.rows,
    excluded: exclusions.record(),
    details: {
      addresses: {
        rows: planned.rows,
        unique_valid: planned.unique.size,
        malformed: planned.invalidCount,
        disposable_never_paid: planned.disposable.size,
        email_class: planned.classes,
      },
      verification: { ...verification, ...verifier.snapshot() },
    },
  });
}

/** A checked address's class; the row's `domain` column, as contacts writes it, names the company's own domain. */
function classOf(row: PlannedRow): EmailClass | '' {
  return emailClass(row.email, row.record['domain']);
}

/** The summary's count of each class, and the disposable addresses left unpaid. */
function reportClasses(ctx: RunContext, planned: PlannedInput): void {
  const unpaid = planned.disposable.size;
  const never = unpaid > 0 ? `; ${countOf(unpaid, 'disposable address', 'disposable addresses')} never paid for` : '';
  ctx.reporter.info(`Addresses: ${emailClassText(planned.classes, formatCount)}${never}.`);
}

/** One row's address: checked and keyed, blank (nothing to check), or malformed with the reason. */
function planRow(record: Record<string, string>, emailColumn: string): PlannedRow & { reason?: string } {
  const value = record[emailColumn] ?? '';
  if (value.trim() === '') return { record, email: undefined, key: undefined, blank: true };
  const checked = checkEmailSyntax(value);
  if (!checked.ok) return { record, email: undefined, key: undefined, reason: checked.reason };
  return { record, email: checked.email, key: emailKey(checked.email) };
}

/** The whole input read once: its counts, distinct addresses and what the input says of them. */
async function planInput(input: RowStream, keepsEmail: (email: string | undefined) => boolean) {
  const invalid: InvalidEntry[] = [];
  let invalidCount = 0;
  let rows = 0;
  const unique = new Set<string>();
  /** Disposable addresses: judged by their class, so never planned for a paid check. */
  const disposable = new Set<string>();
  const classes = newEmailClassCounts();
  /** business_email_last_seen of each address, where the input has it: the budget goes to the oldest. */
  const lastSeen = new Map<string, string>();
  const verifiedInInput = new Map<string, CachedResult>();
  for await (const { line, record } of input.rows) {
    const column = input.column();
    if (column !== null && !keepsEmail(record[column])) continue;
    rows += 1;
    if (column === null) continue;
    const row = planRow(record, column);
    if (row.reason !== undefined) {
      invalidCount += 1;
      if (invalid.length < SHOWN_INVALID) invalid.push({ line, value: record[column] ?? '', reason: row.reason });
    }
    if (row.key === undefined || row.email === undefined) continue;
    const email_class = classOf(row);
    if (email_class !== '') classes[email_class] += 1;
    if (email_class === 'disposable') {
      disposable.add(row.key);
      continue;
    }
    unique.add(row.key);
    const seen = record['business_email_last_seen'];
    if (seen) lastSeen.set(row.key, seen);
    const status = record['verification'];
    const verifiedAt = record['verified_at'];
    if (status && SERVICE_STATUSES.has(status) && verifiedAt && !Number.isNaN(Date.parse(verifiedAt))) {
      verifiedInInput.set(row.key, { email: row.email, status, verified_at: verifiedAt });
    }
  }
  return {
    format: input.format,
    column: input.column(),
    header: input.header(),
    rows,
    invalid,
    invalidCount,
    unique,
    disposable,
    classes,
    lastSeen,
    verifiedInInput,
  };
}

type CachedResult = NonNullable<ReturnType<VerificationLedger['get']>>;

/** A row the input says was verified within --cache-ttl was paid for already (by contacts, or an earlier verify). */
function rememberInputResults(
  ledger: VerificationLedger,
  results: ReadonlyMap<string, CachedResult>,
  freshSince: Date,
): void {
  for (const [key, result] of results) {
    if (new Date(result.verified_at) >= freshSince && !ledger.get(key)) ledger.remember(key, result);
  }
}

/** The input's columns in order; `verification`, `verified_at`, `email_class` where the input has them, else last. */
function verifyColumns(header: readonly string[]): Column<VerifyRow>[] {
  const added = ['verification', 'verified_at', 'email_class'].filter((name) => !header.includes(name));
  const names = [...header, ...added];
  return names.map((name) => ({ name, get: (row: VerifyRow) => row[name] ?? null }));
}
