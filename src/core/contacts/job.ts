import { z } from 'zod';
import { EmptyResultError, UsageError } from '../../exit-codes.js';
import { checkOutputPath, openOutput } from '../../io/output.js';
import { createRowWriter } from '../../io/writers.js';
import { createApiClient } from '../../runtime/api-client.js';
import { resolveConnection } from '../../runtime/connection.js';
import type { RunContext } from '../../runtime/context.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import { atSeniority, leftOutText, reportCutDomains } from '../shared/caveats.js';
import { contactOptions, parseContactFlags } from './options.js';
import { contactRowsFor, countRows, newContactCounts } from './domain-rows.js';
import { CONTACT_COLUMNS, CONTACT_TABLE_COLUMNS, type ContactRow } from './rows.js';
import { callsText, fetchContactsInOrder, newFanoutStats } from './fanout.js';
import { streamEntriesInput } from '../shared/input.js';
import {
  entriesOptions,
  keepEmptyOption,
  outputOptions,
  presetOption,
  summaryOption,
  suppressionOptions,
  verifyCacheOptions,
} from '../shared/flags.js';
import { emptyContactRow } from '../shared/keep-empty.js';
import { documentMeta, metaJson, runRecord } from '../shared/provenance.js';
import { Suppression } from '../shared/suppression.js';
import { mapInOrder } from '../../util/ordered-pool.js';
import { keptItems } from '../../util/async-iterables.js';
import { planOutput } from '../shared/output-plan.js';
import { SpendConsent } from '../verification/consent.js';
import { cacheCutoff, openVerifier, paidCallsClient } from '../verification/open-verifier.js';
import { planSpend, RowSpool, verifiedInOrder } from '../verification/spend-plan.js';
import { reportVerification } from '../verification/report.js';
import { runJob } from '../shared/runner.js';

/** How long the input may pause before a partial batch of domains is asked for. */
const INPUT_PAUSE_MS = 200;

/** `prospect contacts`: its flags (the input) and the job's options (the output). */
export const contactsOptionsSchema = z
  .object({
    ...entriesOptions,
    ...contactOptions,
    ...outputOptions,
    ...presetOption,
    ...summaryOption,
    ...suppressionOptions,
    ...keepEmptyOption,
    ...verifyCacheOptions,
    domainsFile: z.string().optional(),
    domainColumn: z.string().optional(),
    allowEmpty: z.boolean().default(false),
  })
  .transform(({ domainsFile, file, ...rest }) => ({ ...rest, file: domainsFile ?? file }));
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
  const verifyBudget = consent?.budget;
  await checkOutputPath(options.output, { sidecar: '.meta.json' });
  await checkOutputPath(options.summary);
  const suppression = await Suppression.load(ctx, options, { domains: true, emails: true });

  const input = await streamEntriesInput(ctx, { ...options, column: options.domainColumn || undefined }, 'domain');
  if (input.entries === null)
    throw new UsageError(
      'no valid domain in the input.',
      'Give domains as arguments, with --domains-file, or on stdin (one per line, or prospect companies output).',
    );
  // The domains to ask for: the input's entries that EntryCollector.accept let through, in input
  // order, less those on --exclude-domains: an excluded domain is never sent to the service.
  const domains = keptItems(input.entries, (domain) => suppression.keepsDomain(domain));
  const counts = input.collector;

  const summary = {
    parameters: {
      seniority: settings.seniority ?? null,
      limit: settings.limit,
      per_company: settings.perCompany ?? null,
      max_age: settings.maxAgeText,
      stale: settings.stale,
      verify_budget: verifyBudget ?? null,
      concurrency: settings.concurrency,
      ...(options.keepEmpty ? { keep_empty: true } : {}),
      ...suppression.parameters(),
    },
    // valid, invalid and duplicates are the input's counts so far: final once the input has ended.
    domains: { valid: 0, invalid: 0, duplicates: 0, with_contacts: 0, truncated_at_limit: [] as string[] },
    contacts: newContactCounts(),
    verification: { budget: verifyBudget ?? null, units_spent: 0, from_cache: 0, unchecked: 0 },
  };
  let keptEmpty = 0;
  /** Why the run wrote nothing, when it did (--allow-empty): the record's no_match_reason. */
  let noMatchReason: string | null = null;
  let contactSource: unknown;
  const record = () =>
    runRecord({
      command: 'contacts',
      parameters: summary.parameters,
      startedAt,
      output: options.output,
      rows: summary.contacts.written + keptEmpty,
      meta: contactSource === undefined ? null : { source: contactSource },
      excluded: suppression.record(),
      keptEmpty: options.keepEmpty ? keptEmpty : undefined,
      details: {
        domains: inputCounts(),
        contacts: summary.contacts,
        verification: { ...summary.verification, ...verifier?.snapshot() },
        calls: fanout.calls,
        rows_received: fanout.rows,
        no_match_reason: noMatchReason,
      },
    });

  const connection = await resolveConnection(ctx);
  const client = createApiClient(ctx, connection);
  const verifier = consent
    ? openVerifier(ctx, paidCallsClient(ctx, connection), connection, {
        useCache: options.cache,
        cacheFreshSince,
        budget: verifyBudget,
        concurrency: settings.concurrency,
      })
    : undefined;
  // A cap goes to the oldest addresses, and a question states the exact count: the rows wait in a
  // spool, unverified, until every address is known (spend-plan.ts). --yes without a cap verifies as rows arrive.
  const spool = consent?.plansFirst ? await RowSpool.temporary<ContactRow>(ctx) : undefined;
  const output = await openOutput(options.output, ctx.stdout);
  const writer = await createRowWriter<ContactRow>(format, output.sink, {
    columns,
    toJson: (row) => row,
    escapeFormulas: options.escapeFormulas,
    bom: options.bom,
  });
  const fanout = newFanoutStats();

  const finishOutput = async () => {
    await writer.finish(
      documentMeta(format, { summary: { domains: summary.domains, contacts: summary.contacts } }, record),
    );
    await output.writeSidecar('.meta.json', metaJson(record()));
    await output.commit();
  };
  /** Why a run wrote no row: no domain was left to ask for, or no contact of theirs is left to write. */
  const noContactReason = () => {
    const { domains, contacts } = summary;
    if (domains.valid - suppression.removed.domains <= 0)
      return `no contact to write: every domain of the input is on --exclude-domains.`;
    const asked = countOf(domains.valid - suppression.removed.domains, 'domain');
    if (domains.with_contacts === 0)
      return `no contact to write: the service has no named contact${atSeniority(settings.seniority)} for the ${asked} asked for.`;
    return `no contact to write from the ${asked} asked for${leftOutText(contacts.droppedStale, suppression.removed.emails)}.`;
  };
  const inputCounts = () => ({
    ...summary.domains,
    valid: counts.accepted,
    invalid: counts.invalidCount,
    duplicates: counts.duplicates,
  });

  return runJob(ctx, {
    startedAt,
    progress: 'Fetching contacts',
    output,
    summary: { path: options.summary, record },
    async work(progress) {
      // Eight batches ahead per call in flight: see FanoutOptions.batchesAhead. A partial batch goes
      // once the input has paused for INPUT_PAUSE_MS (a producer between two pages).
      const answered = fetchContactsInOrder(
        client,
        domains,
        (domain) => domain,
        { ...settings, batchesAhead: settings.concurrency * 8, flushAfterMs: INPUT_PAUSE_MS },
        fanout,
      );
      const rowsByDomain = mapInOrder(answered, settings.concurrency * 2, async (found) => {
        if (found.truncated) summary.domains.truncated_at_limit.push(found.domain);
        if (found.contacts.length > 0) summary.domains.with_contacts += 1;
        contactSource ??= found.source;
        // Where a contact is accepted: an excluded address is never verified, paid for or written.
        const contacts = suppression.keepContacts(found.contacts);
        const result = await contactRowsFor(contacts, found.source, settings, now, spool ? undefined : verifier);
        return {
          result,
          empty: options.keepEmpty && contacts.length === 0 ? [emptyContactRow(found.domain, settings, now)] : [],
        };
      });
      let domainsDone = 0;
      for await (const { result, empty } of rowsByDomain) {
        await (spool?.writer ?? writer).writeRows([...result.rows, ...empty]);
        countRows(summary.contacts, result);
        keptEmpty += empty.length;
        domainsDone += 1;
        // The total is known once the input has ended: until then, a count without an ETA.
        progress.update({
          done: domainsDone,
          total: input.ended ? counts.accepted - suppression.removed.domains : undefined,
          noun: 'domains',
          detail: `${formatCount(summary.contacts.written)} contacts`,
        });
      }
      summary.domains = inputCounts();
      if (summary.contacts.written + keptEmpty === 0) throw new EmptyResultError(noContactReason());
      if (spool && verifier && consent) {
        await planSpend(spool.rows(), verifier, consent, (during) => progress.suspend(during));
        const rows = summary.contacts.written + keptEmpty;
        const shown = (done: number) =>
          progress.update({
            done,
            total: rows,
            noun: 'rows verified and written',
            detail: `${countOf(verifier.run.unitsSpent, 'unit')} spent`,
          });
        for await (const row of verifiedInOrder(spool.rows(), verifier, settings.concurrency * 4, shown))
          await writer.writeRows([row]);
      }
      await finishOutput();
    },
    async onFailure() {
      // A paid call already sent is let finish and kept in the ledger: a second run must not pay for it again.
      await verifier?.settle();
    },
    async writeEmptyResult(error) {
      if (!(options.allowEmpty && error instanceof EmptyResultError)) return false;
      noMatchReason = error.message;
      await finishOutput();
      return true;
    },
    close: () => verifier?.close(),
    written: () => ({
      rows: summary.contacts.written + keptEmpty,
      noun: ['contact', 'contacts'],
      path: options.output,
    }),
    report() {
      const { contacts, domains } = summary;
      ctx.reporter.info(
        `${countOf(contacts.written, 'contact')} from ${formatCount(domains.with_contacts)}/${countOf(domains.valid, 'domain')} in ${callsText(fanout)} · fresh ${formatCount(contacts.fresh)}, stale ${formatCount(contacts.stale)}, unknown ${formatCount(contacts.unknown)}, no email ${formatCount(contacts.none)}` +
          (contacts.droppedStale > 0 ? ` · dropped stale ${formatCount(contacts.droppedStale)}` : ''),
      );
      if (keptEmpty > 0)
        ctx.reporter.info(
          `${countOf(keptEmpty, 'company', 'companies')} without a named contact kept as empty rows (--keep-empty).`,
        );
      if (verifier) reportVerification(ctx, verifier.snapshot());
      reportCutDomains(ctx.reporter, domains.truncated_at_limit);
      suppression.report(ctx);
    },
  });
}
