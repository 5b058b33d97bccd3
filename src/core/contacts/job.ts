import { z } from 'zod';
import { EmptyResultError, UsageError } from '../../exit-codes.js';
import type { ProspectClient } from '../../api/index.js';
import type { RowWriter } from '../../io/writers.js';
import type { Progress } from '../../ui/progress.js';
import { createApiClient } from '../../runtime/api-client.js';
import { resolveConnection } from '../../runtime/connection.js';
import type { RunContext } from '../../runtime/context.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import { atSeniority, leftOutText, reportCutDomains } from '../shared/caveats.js';
import { contactParameters, parseContactFlags, type ContactSettings } from './options.js';
import { contactRowsFor, countRows, newContactCounts } from './domain-rows.js';
import { CONTACT_COLUMNS, CONTACT_TABLE_COLUMNS, type ContactRow } from './rows.js';
import { callsText, fetchContactsInOrder, newFanoutStats, type FanoutStats } from './fanout.js';
import { streamEntriesInput, type StreamedEntries } from '../shared/input.js';
import { CONTACTS_FLAGS } from '../../options/command-flags.js';
import { flagShape } from '../shared/flags.js';
import { emptyContactRow, reportKeptEmpty } from '../shared/keep-empty.js';
import { runRecord } from '../shared/provenance.js';
import { Suppression } from '../shared/suppression.js';
import { mapInOrder } from '../../util/ordered-pool.js';
import { keptItems } from '../../util/async-iterables.js';
import { planOutput } from '../shared/output-plan.js';
import { SpendConsent } from '../verification/consent.js';
import {
  cacheCutoff,
  openVerifier,
  paidCallsClient,
  verificationSnapshot,
  type OpenedVerifier,
} from '../verification/open-verifier.js';
import { newVerificationRun } from '../verification/verifier.js';
import { planSpend, RowSpool, verifiedInOrder } from '../verification/spend-plan.js';
import { reportVerification } from '../verification/report.js';
import { checkRunFiles, rowFile, runRowJob } from '../shared/runner.js';

/** How long the input may pause before a partial batch of domains is asked for. */
const INPUT_PAUSE_MS = 200;

/** `prospect contacts`: its flags (the input) and the job's options (the output). */
export const contactsOptionsSchema = z
  .object({ ...flagShape(CONTACTS_FLAGS), args: z.array(z.string()) })
  .transform(({ domainsFile, ...rest }) => ({ ...rest, file: domainsFile }));
export type ContactsFlags = z.input<typeof contactsOptionsSchema>;

export async function runContacts(ctx: RunContext, flags: ContactsFlags): Promise<number> {
  const startedAt = Date.now();
  const options = contactsOptionsSchema.parse(flags);
  const now = new Date();
  const settings = parseContactFlags(options, now);
  const cacheFreshSince = cacheCutoff(options.cacheTtl, now);
  const { format, columns } = planOutput(ctx, options, CONTACT_COLUMNS, CONTACT_TABLE_COLUMNS);
  const consent =
    settings.stale === 'verify'
      ? await SpendConsent.decide(ctx, { yes: options.yes, budget: settings.verifyBudget })
      : undefined;
  consent?.assertMayPay('contacts --stale verify');
  await checkRunFiles(options);
  const suppression = await Suppression.load(ctx, options, { domains: true, emails: true });
  const input = await readDomains(ctx, options, suppression);
  const connection = await resolveConnection(ctx);
  const client = createApiClient(ctx, connection);
  const verifier = consent
    ? await openVerifier(ctx, paidCallsClient(ctx, connection), connection, {
        useCache: options.cache,
        cacheFreshSince,
        budget: consent.budget,
        concurrency: settings.concurrency,
      })
    : undefined;
  const run: ContactsRun = {
    options,
    settings,
    now,
    suppression,
    input,
    client,
    verifier,
    consent,
    // A cap goes to the oldest addresses, and a question states the exact count: the rows wait in a
    // spool, unverified, until every address is known (spend-plan.ts). --yes without a cap verifies as rows arrive.
    spool: consent?.plansFirst ? await RowSpool.temporary<ContactRow>(ctx) : undefined,
    counts: newRunCounts(),
    fanout: newFanoutStats(),
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
      // A paid call already sent is let finish and kept in the ledger: a second run must not pay for it again.
      await verifier?.settle();
    },
    emptyResult(error) {
      if (!(options.allowEmpty && error instanceof EmptyResultError)) return undefined;
      run.counts.noMatchReason = error.message;
      return { meta: documentEnd(), sidecar: true };
    },
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
  now: Date;
  suppression: Suppression;
  input: DomainsInput;
  client: ProspectClient;
  verifier: OpenedVerifier | undefined;
  consent: SpendConsent | undefined;
  spool: RowSpool<ContactRow> | undefined;
  counts: ReturnType<typeof newRunCounts>;
  fanout: FanoutStats;
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
    source: undefined as unknown,
  };
}

/** Every row written, --keep-empty's included. */
const rowsOf = (run: ContactsRun) => run.counts.contacts.written + run.counts.keptEmpty;

async function readDomains(ctx: RunContext, options: ContactsOptions, suppression: Suppression): Promise<DomainsInput> {
  const streamed = await streamEntriesInput(ctx, { ...options, column: options.domainColumn || undefined }, 'domain');
  if (streamed.entries === null)
    throw new UsageError(
      'no valid domain in the input.',
      'Give domains as arguments, with --domains-file, or on stdin (one per line, or prospect companies output).',
    );
  // The domains to ask for: the input's entries that EntryCollector.accept let through, in input
  // order, less those on --exclude-domains: an excluded domain is never sent to the service.
  return { domains: keptItems(streamed.entries, (domain) => suppression.keepsDomain(domain)), streamed };
}

/** Each domain's contacts, in input order, written (or spooled) as they come. */
async function writeContacts(run: ContactsRun, writer: RowWriter<ContactRow>, progress: Progress): Promise<void> {
  const { options, settings, now, suppression, counts } = run;
  // Eight batches ahead per call in flight: see FanoutOptions.batchesAhead. A partial batch goes
  // once the input has paused for INPUT_PAUSE_MS (a producer between two pages).
  const answered = fetchContactsInOrder(
    run.client,
    run.input.domains,
    (domain) => domain,
    { ...settings, batchesAhead: settings.concurrency * 8, flushAfterMs: INPUT_PAUSE_MS },
    run.fanout,
  );
  const rowsByDomain = mapInOrder(answered, settings.concurrency * 2, async (found) => {
    if (found.truncated) counts.domains.truncated_at_limit.push(found.domain);
    if (found.contacts.length > 0) counts.domains.with_contacts += 1;
    counts.source ??= found.source;
    // Where a contact is accepted: an excluded address is never verified, paid for or written.
    const contacts = suppression.keepContacts(found.contacts);
    const verifier = run.spool ? undefined : run.verifier;
    const result = await contactRowsFor(contacts, found.source, settings, now, verifier);
    const keptEmpty = options.keepEmpty && contacts.length === 0;
    return { result, empty: keptEmpty ? [emptyContactRow(found.domain, settings, now)] : [] };
  });
  let domainsDone = 0;
  for await (const { result, empty } of rowsByDomain) {
    await writer.writeRows([...result.rows, ...empty]);
    countRows(counts.contacts, result);
    counts.keptEmpty += empty.length;
    domainsDone += 1;
    // The total is known once the input has ended: until then, a count without an ETA.
    const { streamed } = run.input;
    progress.update({
      done: domainsDone,
      total: streamed.ended ? streamed.collector.accepted - suppression.removed.domains : undefined,
      noun: 'domains',
      detail: `${formatCount(counts.contacts.written)} contacts`,
    });
  }
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
  for await (const row of verifiedInOrder(spool.rows(), verifier, run.settings.concurrency * 4, shown))
    await writer.writeRows([row]);
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
  const removed = run.suppression.removed;
  if (domains.valid - removed.domains <= 0)
    return `no contact to write: every domain of the input is on --exclude-domains.`;
  const asked = countOf(domains.valid - removed.domains, 'domain');
  if (domains.with_contacts === 0) {
    const seniority = atSeniority(run.settings.seniority);
    return `no contact to write: the service has no named contact${seniority} for the ${asked} asked for.`;
  }
  return `no contact to write from the ${asked} asked for${leftOutText(contacts.droppedStale, removed.emails)}.`;
}

function contactsRecord(run: ContactsRun, startedAt: number) {
  const { options, settings, counts, suppression, verifier } = run;
  const verifyBudget = run.consent?.budget;
  return runRecord({
    command: 'contacts',
    parameters: {
      ...contactParameters(settings),
      verify_budget: verifyBudget ?? null,
      concurrency: settings.concurrency,
      ...(options.keepEmpty ? { keep_empty: true } : {}),
      ...suppression.parameters(),
    },
    startedAt,
    output: options.output,
    rows: rowsOf(run),
    meta: counts.source === undefined ? null : { source: counts.source },
    excluded: suppression.record(),
    keptEmpty: options.keepEmpty ? counts.keptEmpty : undefined,
    details: {
      domains: inputCounts(run),
      contacts: counts.contacts,
      verification: {
        budget: verifyBudget ?? null,
        ...(verifier?.snapshot() ?? verificationSnapshot(newVerificationRun(verifyBudget))),
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
  if (run.verifier) reportVerification(ctx, run.verifier.snapshot());
  reportCutDomains(ctx.reporter, domains.truncated_at_limit);
  run.suppression.report(ctx);
}
