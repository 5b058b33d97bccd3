import { z } from 'zod';
import { MAX_DOMAINS_PER_CALL } from '../../api/limits.js';
import { EmptyResultError, UsageError } from '../../exit-codes.js';
import type { ProspectClient } from '../../api/index.js';
import type { RowWriter } from '../../io/writers.js';
import type { Progress } from '../../ui/progress.js';
import type { RunContext } from '../../runtime/context.js';
import type { JobDeps } from '../../runtime/job-deps.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import { atSeniority, leftOutText, reportCutDomains } from '../shared/caveats.js';
import { contactParameters, parseContactFlags, type ContactSettings } from './options.js';
import { contactRowsFor, countRows, newContactCounts, uncountRow } from './domain-rows.js';
import { keptColumns, keptOutputColumns, withKeptColumns, type KeptColumn } from './kept-columns.js';
import { reportRowFilters, totalUndeliverable, undeliverableKind } from './row-filters.js';
import { CONTACT_COLUMNS, CONTACT_TABLE_COLUMNS, type ContactRow } from './rows.js';
import { callsText, fetchContactsInOrder, newFanoutStats, type FanoutStats } from './fanout.js';
import { streamEntriesInput, type StreamedEntries } from '../shared/input.js';
import { CONTACTS_FLAGS } from '../../options/command-flags.js';
import { flagShape } from '../shared/flags.js';
import { emptyContactRow, reportKeptEmpty } from './keep-empty.js';
import { runRecord } from '../shared/provenance.js';
import { Exclusions } from '../shared/exclusion.js';
import { loadSuppression } from '../suppression/suppression.js';
import { mapInOrder } from '../../util/ordered-pool.js';
import { keptItems } from '../../util/async-iterables.js';
import { planOutput } from '../shared/output-plan.js';
import { SpendConsent } from '../verification/consent.js';
import { cacheCutoff, openVerifier, type OpenedVerifier } from '../verification/open-verifier.js';
import { newVerificationRun } from '../verification/verifier.js';
import { planSpend, RowSpool, verifiedInOrder } from '../verification/spend-plan.js';
import { reportVerification, verificationSnapshot } from '../verification/report.js';
import { verificationEnding } from '../verification/refusal.js';
import { checkRunFiles, rowFile, runRowJob } from '../shared/runner.js';

/** How long the input may pause before a partial batch of domains is asked for. */
const INPUT_PAUSE_MS = 200;

/** `prospect contacts`: its flags (the input) and the job's options (the output). */
const contactsOptionsSchema = z
  .object({ ...flagShape(CONTACTS_FLAGS), args: z.array(z.string()) })
  .transform(({ domainsFile, ...rest }) => ({ ...rest, file: domainsFile }));
export type ContactsFlags = z.input<typeof contactsOptionsSchema>;

export async function runContacts(ctx: RunContext, flags: ContactsFlags, deps: JobDeps): Promise<number> {
  const startedAt = Date.now();
  const options = contactsOptionsSchema.parse(flags);
  const now = deps.now();
  const settings = parseContactFlags(options, now);
  const cacheFreshSince = cacheCutoff(options.cacheTtl, now);
  const consent =
    settings.stale === 'verify'
      ? await SpendConsent.decide(ctx, { yes: options.yes, budget: settings.verifyBudget })
      : undefined;
  consent?.assertMayPay('contacts --stale verify');
  await checkRunFiles(options);
  const exclusions = await Exclusions.load(ctx, options, { domains: true, emails: true }, await loadSuppression(ctx));
  const input = await readDomains(ctx, options, exclusions);
  // Known once the first entry has arrived (and before any call): the input's columns to copy onto its contacts.
  const kept = keptColumns(input.streamed.records?.header ?? [], options.keepColumns, options.preset !== undefined);
  const all = [...CONTACT_COLUMNS, ...keptOutputColumns(kept)];
  const { format, columns } = planOutput(ctx, options, all, CONTACT_TABLE_COLUMNS);
  const connection = await deps.connection();
  const client = deps.client(connection);
  const verifier = consent
    ? await openVerifier(ctx, deps.paidClient(connection), connection, {
        useCache: options.cache,
        cacheFreshSince,
        budget: consent.budget,
        concurrency: settings.concurrency,
      })
    : undefined;
  const run: ContactsRun = {
    options,
    settings,
    kept,
    now,
    exclusions,
    input,
    client,
    verifier,
    consent,
    // A cap goes to the oldest addresses, and a question states the exact count: the rows wait in a
    // spool, unverified, until every address is known (spend-plan.ts). --yes without a cap verifies as rows arrive.
    spool: consent?.plansFirst ? await RowSpool.temporary<ContactRow>(ctx) : undefined,
    counts: newRunCounts(),
    fanout: newFanoutStats(),
    domainsDone: 0,
  };
  const record = () => contactsRecord(run, startedAt);
  const documentEnd = () => ({ summary: { domains: run.counts.domains, contacts: run.counts.contacts } });

  return runRowJob<ContactRow>(ctx, {
    startedAt,
    progress: 'Fetching contacts',
    file: rowFile(options, format, columns),
    summary: { path: options.summary, record },
    async work(writer, progress) {
      await writeContacts(run, run.spool?.writer ?? writer, progress);
      run.counts.domains = inputCounts(run);
      if (rowsOf(run) === 0) throw new EmptyResultError(noContactReason(run));
      if (run.spool) await verifySpooled(run, writer, progress);
      return documentEnd();
    },
    async onFailure() {
      // A paid call already sent is let finish and kept in the verification ledger: a second run must
      // not pay for it again.
      await verifier?.settle();
    },
    emptyResult(error) {
      if (!(options.allowEmpty && error instanceof EmptyResultError)) return undefined;
      run.counts.noMatchReason = error.message;
      return { meta: documentEnd(), sidecar: true };
    },
    endsWith: () => verificationEnding(verifier),
    close: () => verifier?.close(),
    written: () => ({ rows: rowsOf(run), noun: ['contact', 'contacts'], path: options.output }),
    report: () => reportContacts(ctx, run),
  });
}

type ContactsOptions = z.output<typeof contactsOptionsSchema>;

/** What one run of `contacts` works with, and what it has counted so far. */
interface ContactsRun {
  options: ContactsOptions;
  settings: ContactSettings;
  /** The input's columns each row carries (--keep-columns, --preset). */
  kept: KeptColumn[];
  now: Date;
  exclusions: Exclusions;
  input: DomainsInput;
  client: ProspectClient;
  verifier: OpenedVerifier | undefined;
  consent: SpendConsent | undefined;
  spool: RowSpool<ContactRow> | undefined;
  counts: ReturnType<typeof newRunCounts>;
  fanout: FanoutStats;
  domainsDone: number;
}

interface DomainsInput {
  /** The domains to ask for, in input order. */
  domains: AsyncIterable<string>;
  streamed: StreamedEntries;
}

function newRunCounts() {
  return {
    // valid, invalid and duplicates are the input's counts so far: final once the input has ended.
    domains: { valid: 0, invalid: 0, duplicates: 0, with_contacts: 0, truncated_at_limit: [] as string[] },
    contacts: newContactCounts(),
    keptEmpty: 0,
    /** Why the run wrote nothing, when it did (--allow-empty): the record's no_match_reason. */
    noMatchReason: null as string | null,
    /** --max was reached with more rows to write (or, on a stream, with its rest unread). */
    stoppedAtMax: false,
    /** --max was reached on a stream that had not ended: the rest was not read. */
    inputLeftUnread: false,
    source: undefined as unknown,
  };
}

/** Every row written, --keep-empty's included. */
const rowsOf = (run: ContactsRun) => run.counts.contacts.written + run.counts.keptEmpty;

async function readDomains(ctx: RunContext, options: ContactsOptions, exclusions: Exclusions): Promise<DomainsInput> {
  // A row keeps its input row only when a column of it may be copied (--keep-columns, --preset).
  const keepRecords = options.keepColumns !== undefined || options.preset !== undefined;
  const column = options.domainColumn || undefined;
  const streamed = await streamEntriesInput(ctx, { ...options, column, keepRecords }, 'domain');
  if (streamed.entries === null)
    throw new UsageError(
      'no valid domain in the input.',
      'Give domains as arguments, with --domains-file, or on stdin (one per line, or prospect companies output).',
    );
  // The domains to ask for: the input's entries that EntryCollector.accept let through, in input
  // order, less those on --exclude-domains: an excluded domain is never sent to the service.
  return { domains: keptItems(streamed.entries, (domain) => exclusions.keepsDomain(domain)), streamed };
}

/** Each domain's contacts, in input order, written (or spooled) as they come; with --max, in rounds. */
async function writeContacts(run: ContactsRun, writer: RowWriter<ContactRow>, progress: Progress): Promise<void> {
  if (run.options.max !== undefined) return writeUpToMax(run, writer, progress, run.options.max);
  // Eight batches ahead per call in flight: see FanoutOptions.batchesAhead. A partial batch goes
  // once the input has paused for INPUT_PAUSE_MS (a producer between two pages).
  const fanout = { batchesAhead: run.settings.concurrency * 8, flushAfterMs: INPUT_PAUSE_MS };
  for await (const domainRows of rowsByDomain(run, run.input.domains, fanout))
    await writeDomainRows(run, writer, progress, domainRows);
}

/**
 * --max N: the domains asked in rounds, each of as many domains as the rows still wanted need at the
 * rows a domain has given so far (100 at most, a call's worth), and each asked only once the rows
 * before it are written: the run stops calling as soon as N rows are written, and asks for no domain
 * whose rows it cannot write.
 */
async function writeUpToMax(
  run: ContactsRun,
  writer: RowWriter<ContactRow>,
  progress: Progress,
  max: number,
): Promise<void> {
  const input = run.input.domains[Symbol.asyncIterator]();
  const rounds = new DomainRounds(input, run.input.streamed.stream);
  let asked = 0;
  try {
    for (;;) {
      const wanted = max - rowsOf(run);
      // Before any row, one a domain: the first round is never more domains than rows wanted.
      const perDomain = asked === 0 ? 1 : Math.max(rowsOf(run) / asked, 0.01);
      const round = await rounds.take(Math.min(MAX_DOMAINS_PER_CALL, Math.ceil(wanted / perDomain)));
      if (round.length === 0) return;
      asked += round.length;
      for await (const domainRows of rowsByDomain(run, round, { batchesAhead: 1 })) {
        const room = max - rowsOf(run);
        const rows = domainRows.rows.slice(0, room);
        if (rows.length < domainRows.rows.length) run.counts.stoppedAtMax = true;
        await writeDomainRows(run, writer, progress, { ...domainRows, rows });
        if (rowsOf(run) >= max) {
          run.counts.stoppedAtMax ||= round.at(-1) !== domainRows.domain || (await moreInput(run, input));
          return;
        }
      }
    }
  } finally {
    await rounds.close();
  }
}

/**
 * Whether domains follow the ones asked for. A file is read on to the next one; a stream is not read
 * on (it may never end, or give only duplicates): unless it has ended, the rest of it is left unread.
 */
async function moreInput(run: ContactsRun, input: AsyncIterator<string>): Promise<boolean> {
  const { streamed } = run.input;
  if (!streamed.stream) return !(await input.next()).done;
  run.counts.inputLeftUnread = !streamed.ended;
  return run.counts.inputLeftUnread;
}

/**
 * The input's domains, a round at a time. A file gives a whole round; a stream gives what has already
 * arrived, waiting only for the first, so a round never waits for input that may never come
 * (`yes D | prospect contacts --max 5`), and what arrived together still goes in one call.
 */
class DomainRounds {
  private pending: Promise<IteratorResult<string>> | undefined;

  constructor(
    private readonly input: AsyncIterator<string>,
    private readonly stream: boolean,
  ) {}

  /**
   * Stops reading. A read still waiting on a stream (`yes D |`: only duplicates follow) ends when the
   * run's cleanup closes standard input (src/core/shared/input.ts); waiting for it here would not end.
   */
  async close(): Promise<void> {
    if (this.pending === undefined) await this.input.return?.();
    else void this.input.return?.().catch(() => {});
  }

  async take(count: number): Promise<string[]> {
    const domains: string[] = [];
    while (domains.length < count) {
      const next = this.pending ?? this.input.next();
      this.pending = undefined;
      const result = domains.length === 0 || !this.stream ? await next : await arrivedAlready(next);
      if (result === undefined) {
        this.pending = next;
        break;
      }
      if (result.done) break;
      domains.push(result.value);
    }
    return domains;
  }
}

/** The promise's value if it has already arrived (by the next turn of the event loop), else undefined. */
function arrivedAlready<T>(promise: Promise<T>): Promise<T | undefined> {
  return Promise.race([promise, new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined)))]);
}

/** One domain's rows as a job writes them: its contacts', then --keep-empty's. */
interface DomainRowsOut {
  domain: string;
  rows: ContactRow[];
  /** The counts of the domain's contact rows (before --max cut any). */
  result: Awaited<ReturnType<typeof contactRowsFor>>;
  keptEmpty: number;
}

/** Each domain of `domains` with its rows, in input order, while the next domains' contacts are asked for. */
function rowsByDomain(
  run: ContactsRun,
  domains: AsyncIterable<string> | Iterable<string>,
  fanout: { batchesAhead: number; flushAfterMs?: number },
): AsyncGenerator<DomainRowsOut> {
  const { options, settings, now, exclusions, counts } = run;
  const answered = fetchContactsInOrder(
    run.client,
    domains,
    (domain) => domain,
    { ...settings, ...fanout },
    run.fanout,
  );
  return mapInOrder(answered, settings.concurrency * 2, async (found) => {
    if (found.truncated) counts.domains.truncated_at_limit.push(found.domain);
    if (found.contacts.length > 0) counts.domains.with_contacts += 1;
    counts.source ??= found.source;
    // Where a contact is accepted: an excluded address is never verified, paid for or written.
    const contacts = exclusions.keepContacts(found.contacts);
    const verifier = run.spool ? undefined : run.verifier;
    const result = await contactRowsFor(contacts, found.source, settings, now, verifier);
    const empty = options.keepEmpty && contacts.length === 0 ? [emptyContactRow(found.domain, settings, now)] : [];
    const record = run.input.streamed.records?.take(found.domain);
    const rows = withKeptColumns([...result.rows, ...empty], run.kept, record);
    return { domain: found.domain, rows, result, keptEmpty: empty.length };
  });
}

async function writeDomainRows(
  run: ContactsRun,
  writer: RowWriter<ContactRow>,
  progress: Progress,
  out: DomainRowsOut,
): Promise<void> {
  const { counts, exclusions } = run;
  await writer.writeRows(out.rows);
  // What --max cut off is not counted as written: the contact rows first, then the kept-empty one.
  const contactRows = out.rows.slice(0, out.result.rows.length);
  countRows(counts.contacts, { ...out.result, rows: contactRows });
  counts.keptEmpty += out.rows.length - contactRows.length;
  run.domainsDone += 1;
  // The total is known once the input has ended: until then, a count without an ETA.
  const { streamed } = run.input;
  progress.update({
    done: run.domainsDone,
    total: streamed.ended ? streamed.collector.accepted - exclusions.removed.domains : undefined,
    noun: 'domains',
    detail: `${formatCount(counts.contacts.written)} contacts`,
  });
}

/** A run that plans first: the spooled rows verified, oldest addresses first within the cap, and written in order. */
async function verifySpooled(run: ContactsRun, writer: RowWriter<ContactRow>, progress: Progress): Promise<void> {
  const { spool, verifier, consent } = run;
  if (!spool || !verifier || !consent) return;
  await planSpend(spool.rows(), verifier, consent, (during) => progress.suspend(during));
  const rows = rowsOf(run);
  const shown = (done: number) =>
    progress.update({
      done,
      total: rows,
      noun: 'rows verified and written',
      detail: `${countOf(verifier.run.unitsSpent, 'unit')} spent`,
    });
  for await (const row of verifiedInOrder(spool.rows(), verifier, run.settings.concurrency * 4, shown)) {
    // --deliverable-only: the verdicts are known only now, so a row left out is counted again here.
    const kind = run.settings.deliverableOnly ? undeliverableKind(row, run.settings.keepClasses) : null;
    if (kind === null) await writer.writeRows([row]);
    else uncountRow(run.counts.contacts, row, kind);
  }
}

/** The input's counts: final once the input has ended. */
function inputCounts(run: ContactsRun) {
  const { collector } = run.input.streamed;
  return {
    ...run.counts.domains,
    valid: collector.accepted,
    invalid: collector.invalidCount,
    duplicates: collector.duplicates,
  };
}

/** Why a run wrote no row: no domain was left to ask for, or no contact of theirs is left to write. */
function noContactReason(run: ContactsRun): string {
  const { domains, contacts } = run.counts;
  const removed = run.exclusions.removed;
  if (domains.valid - removed.domains <= 0)
    return `no contact to write: every domain of the input is on --exclude-domains.`;
  const asked = countOf(domains.valid - removed.domains, 'domain');
  if (domains.with_contacts === 0) {
    const seniority = atSeniority(run.settings.seniority);
    return `no contact to write: the service has no named contact${seniority} for the ${asked} asked for.`;
  }
  const filters = { filteredOut: contacts.filteredOut, undeliverable: totalUndeliverable(contacts.undeliverable) };
  const leftOut = leftOutText(contacts.droppedStale, removed.emails, filters);
  return `no contact to write from the ${asked} asked for${leftOut}.`;
}

function contactsRecord(run: ContactsRun, startedAt: number) {
  const { options, settings, counts, exclusions, verifier } = run;
  const verifyBudget = run.consent?.budget;
  return runRecord({
    command: 'contacts',
    parameters: {
      ...contactParameters(settings),
      verify_budget: verifyBudget ?? null,
      concurrency: settings.concurrency,
      ...(options.max !== undefined ? { max: options.max } : {}),
      ...(run.kept.length > 0 ? { keep_columns: run.kept.map((column) => column.name) } : {}),
      ...(options.keepEmpty ? { keep_empty: true } : {}),
      ...exclusions.parameters(),
    },
    startedAt,
    output: options.output,
    rows: rowsOf(run),
    meta: counts.source === undefined ? null : { source: counts.source },
    excluded: exclusions.record(),
    stoppedAtMax: counts.stoppedAtMax,
    keptEmpty: options.keepEmpty ? counts.keptEmpty : undefined,
    details: {
      domains: inputCounts(run),
      contacts: counts.contacts,
      verification: {
        budget: verifyBudget ?? null,
        ...(verifier?.snapshot() ?? verificationSnapshot(newVerificationRun(verifyBudget, 0))),
      },
      calls: run.fanout.calls,
      rows_received: run.fanout.rows,
      no_match_reason: counts.noMatchReason,
    },
  });
}

function reportContacts(ctx: RunContext, run: ContactsRun): void {
  const { contacts, domains, keptEmpty } = run.counts;
  const domainsText = `${formatCount(domains.with_contacts)}/${countOf(domains.valid, 'domain')}`;
  const freshness =
    `fresh ${formatCount(contacts.fresh)}, stale ${formatCount(contacts.stale)}, ` +
    `unknown ${formatCount(contacts.unknown)}, no email ${formatCount(contacts.none)}`;
  const dropped = contacts.droppedStale > 0 ? ` · dropped stale ${formatCount(contacts.droppedStale)}` : '';
  ctx.reporter.info(
    `${countOf(contacts.written, 'contact')} from ${domainsText} in ${callsText(run.fanout)} · ${freshness}${dropped}`,
  );
  reportKeptEmpty(ctx.reporter, keptEmpty);
  // Asked for: a summary line, not a warning a cron job mails every run (the record has stopped_at_max).
  if (run.counts.stoppedAtMax) {
    const rest = run.counts.inputLeftUnread
      ? `the rest of ${run.input.streamed.origin} was not read`
      : 'more contacts follow';
    ctx.reporter.info(`Stopped at --max ${formatCount(run.options.max!)}; ${rest}.`);
  }
  reportRowFilters(ctx.reporter, run.settings, contacts);
  if (run.verifier) reportVerification(ctx, run.verifier.snapshot());
  reportCutDomains(ctx.reporter, domains.truncated_at_limit);
  run.exclusions.report(ctx);
}
