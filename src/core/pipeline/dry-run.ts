/**
 * `pipeline --dry-run`: what a run would do, with nothing spent and no output written. The set's
 * companies and contacts come from the service's count (count.ts's calls); everything that depends
 * on the contacts themselves (how many leads the seniority, --per-company and --stale rules keep,
 * how many addresses are stale, how many are already paid for or were exported before) is measured
 * on a sample and scaled to the set. No paid call is made; the ledgers and the state are only read
 * (a state directory from before the exports ledger is converted first, as a run would).
 *
 * The sample is stratified by employee range: the service counts each range's companies and
 * contacts exactly (one call each), and a company's size decides most of what a run keeps of it
 * (how many contacts it has, how many of them are senior; a set's first pages are its most popular
 * sites, larger than its tail). Each range's sample is spread evenly over its first pages, and its
 * figures are scaled by the range's exact contact count (a ratio estimate: the share of a range's
 * contacts that become leads), so a range without contacts adds none and one rich in them weighs
 * what it holds.
 */
import { existsSync } from 'node:fs';
import type { Contact, ContactsMeta, ProspectClient } from '../../api/index.js';
import { CLIENT_DEFAULTS, MAX_CONTACTS_PER_CALL, MAX_DOMAINS_PER_CALL } from '../../api/index.js';
import { emailKey } from '../../io/emails.js';
import { createApiClient } from '../../runtime/api-client.js';
import { resolveConnection } from '../../runtime/connection.js';
import type { RunContext } from '../../runtime/context.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import {
  companyQueries,
  localStackFilter,
  normalizeCountries,
  validateCompanyFilters,
  type CompanyFilters,
} from '../companies/filters.js';
import { countSet } from '../companies/set-count.js';
import { checkLocalTechnologies, walkCompanies } from '../companies/walk.js';
import { parseContactFlags, type ContactSettings } from '../contacts/options.js';
import type { ContactRow } from '../contacts/rows.js';
import { contactRowsFor } from '../contacts/domain-rows.js';
import { fetchContactsInOrder, newFanoutStats } from '../contacts/fanout.js';
import { ExportsLedger } from './state/exports-ledger.js';
import { planPipeline } from './plan.js';
import { StateDirectory } from './state/state-directory.js';
import { Semaphore } from '../../util/ordered-pool.js';
import { breakdownByQueries, employeeRangeLabels } from '../count/breakdown.js';
import { answerAll, askSetSize, type SetSize } from '../count/set-size.js';
import { SpendConsent } from '../verification/consent.js';
import { cacheCutoff, openLedger } from '../verification/open-verifier.js';
import { needsVerification } from '../verification/spend-plan.js';
import { pipelineOptionsSchema, type PipelineFlags, type PipelineOptions } from './options.js';
import { Suppression } from '../shared/suppression.js';
import { runJob } from '../shared/runner.js';

/** Companies whose contacts are sampled, over all strata: a few calls of 100 domains, whatever the set. */
export const SAMPLE_COMPANIES = 1000;
/** Contacts the sample's companies may hold, as the service counted them: about ten calls' worth. */
const SAMPLE_CONTACTS = 10_000;
/** Each stratum's sample is spread over its first pages (free calls), not only its first companies. */
const SAMPLE_PAGES_PER_STRATUM = 2;
/**
 * The sample asks with the service's largest limit. It asks every contact of its companies, not only
 * the run's seniorities: the service's count, which the sample is scaled by, is of every contact. The
 * run's seniority filter is then applied here as the service applies it (a filter that keeps the
 * service's order), so the sample keeps what the run would be sent.
 */
const SAMPLE_LIMIT = MAX_CONTACTS_PER_CALL;

/** What the sample found, in one stratum or in all. */
export interface Tally {
  companies: number;
  /** Every contact of the sampled companies (no seniority filter). */
  contacts: number;
  /** What the run would ask for (the seniority filter), and write, of them. */
  asked: number;
  rows: number;
  alreadyExported: number;
  /** Addresses of written rows that a --stale verify run checks (stale or of unknown age). */
  toVerify: number;
  alreadyPaid: number;
}

/** A part of the set sampled on its own, with what the service counted of it. */
export interface Stratum {
  filters: CompanyFilters;
  companies: number;
  /** undefined: the service did not count them (the sample then scales by companies). */
  contacts: number | undefined;
  /**
   * The service counted a wider set (technologies it could not take): its companies are scaled by the
   * share the sample kept.
   */
  wider: boolean;
}

export interface StratumSample {
  stratum: Stratum;
  domains: string[];
  /** Rows listed, and kept by the local technology filters, while picking the sample. */
  listed: number;
  kept: number;
  /** Of the kept rows, those --exclude-domains leaves out (never sampled). */
  excluded: number;
  tally: Tally;
}

export interface Sample {
  strata: StratumSample[];
  calls: number;
  callMs: number[];
}

export interface DryRunEstimate {
  companies: number;
  contacts: number | undefined;
  /** --exclude-domains: the set's companies a run leaves out, estimated from the pages sampled; else null. */
  excludedCompanies: number | null;
  /** --max below the companies left: the companies a run does, which the figures below are for; else null. */
  maxCompanies: number | null;
  countedBy: 'service' | 'sample';
  sample: Tally & { calls: number; strata: number };
  leads: number;
  alreadyExported: number;
  staleShare: number;
  addressesToVerify: number;
  alreadyPaid: number;
  units: number;
  seconds: number;
}

export async function runPipelineDryRun(ctx: RunContext, flags: PipelineFlags): Promise<number> {
  const startedAt = Date.now();
  const parsed = pipelineOptionsSchema.parse(flags);
  validateCompanyFilters(parsed.filters);
  const options = { ...parsed, filters: await normalizeCountries(parsed.filters) };
  // The cap a real run would have (flag or config); nothing is asked: nothing is paid.
  const budget =
    options.stale === 'verify'
      ? (await SpendConsent.decide(ctx, { yes: options.yes, budget: options.verifyBudget })).budget
      : undefined;
  // The lists a real run would apply: the sample never asks for an excluded company, nor counts an excluded address.
  const suppression = await Suppression.load(ctx, options, { domains: true, emails: true });
  planPipeline(ctx, options, budget, suppression.parameters());
  const now = new Date();
  const settings = parseContactFlags(options, now);
  const connection = await resolveConnection(ctx);
  const client = createApiClient(ctx, connection);
  const ledger = await openLedger(ctx, connection, {
    useCache: options.cache,
    cacheFreshSince: cacheCutoff(options.cacheTtl, now),
  });
  ctx.onCleanup(() => ledger.close());
  // The same lookup as a run's, in the same ledger: nothing of the state's history is loaded.
  const exported =
    options.onlyNew && options.state !== undefined && existsSync(options.state)
      ? await ExportsLedger.openIfAny(await StateDirectory.open(options.state))
      : undefined;
  if (exported) ctx.onCleanup(() => exported.close());
  const keepNew = exported ? (rows: ContactRow[]) => exported.newOnly(rows) : undefined;
  let estimate: DryRunEstimate | undefined;

  return runJob(ctx, {
    startedAt,
    progress: 'Sizing the run…',
    output: undefined,
    async work(progress) {
      const timed = timedClient(client);
      const pageSize = ctx.global.pageSize ?? CLIENT_DEFAULTS.pageSize;
      const size = await askSetSize(timed.client, options.filters, settings.concurrency);
      const strata =
        size === undefined
          ? [await widerStratum(timed.client, options.filters, settings.concurrency)]
          : await strataOf(timed.client, options.filters, size, settings.concurrency);
      progress.update({ done: 0, noun: 'companies sampled' });
      const sample = await sampleContacts(
        timed.client,
        strata,
        pageSize,
        settings,
        now,
        keepNew,
        (email) => ledger.get(emailKey(email)) !== undefined,
        suppression,
      );
      estimate = estimateRun(options, settings, budget, size, sample, timed.companyMs, pageSize);
      ctx.stdout.write(
        options.format === 'json' ? `${JSON.stringify(estimate, null, 2)}\n` : dryRunText(estimate, options, budget),
      );
    },
    written: () => ({ rows: 1, noun: ['estimate', 'estimates'], path: undefined }),
    report() {
      // The result on stdout already says that nothing was spent.
    },
  });
}

/** A client that times each call, for the estimate of how long a run takes. */
function timedClient(client: ProspectClient) {
  const companyMs: number[] = [];
  const wrapped: ProspectClient = {
    ...client,
    companies(query, options) {
      const pages = client.companies(query, options);
      return {
        async *[Symbol.asyncIterator]() {
          let started = performance.now();
          for await (const page of pages) {
            companyMs.push(performance.now() - started);
            yield page;
            started = performance.now();
          }
        },
      };
    },
  };
  return { client: wrapped, companyMs };
}

/**
 * The set's employee ranges, each counted by the service (one call each), or the set as one stratum
 * where the ranges do not add up to it (a company without a range, a service that does not count them).
 */
async function strataOf(
  client: ProspectClient,
  filters: CompanyFilters,
  size: SetSize,
  concurrency: number,
): Promise<Stratum[]> {
  const whole: Stratum[] = [{ filters, companies: size.companies, contacts: size.contacts, wider: false }];
  if (size.contacts === undefined) return whole;
  const labels = employeeRangeLabels(filters);
  const ranges = await breakdownByQueries(client, filters, 'employee_range', labels, concurrency);
  if (ranges === undefined || ranges.total.companies !== size.companies || ranges.total.contacts !== size.contacts)
    return whole;
  return ranges.segments.map((segment) => ({
    filters: { ...filters, employeeRanges: [segment.value] },
    companies: segment.companies,
    contacts: segment.contacts,
    wider: false,
  }));
}

/** The service's count of the set without the technologies it cannot take: the sample then scales its companies. */
async function widerStratum(client: ProspectClient, filters: CompanyFilters, concurrency: number): Promise<Stratum> {
  const answers = await answerAll(client, companyQueries(filters), concurrency);
  const count = countSet(filters, answers);
  const wider = count.exact ? count : count.wider;
  return { filters, companies: wider?.companies ?? 0, contacts: undefined, wider: true };
}

/**
 * Each stratum's share of the sample: half by its companies, half by its contacts (where most leads
 * are); all scaled down where the companies picked would hold more than SAMPLE_CONTACTS contacts, as
 * the service counted them, so that a set of large companies costs a few calls too.
 */
function quotas(strata: Stratum[]): number[] {
  const companies = strata.reduce((sum, stratum) => sum + stratum.companies, 0);
  const contacts = strata.reduce((sum, stratum) => sum + (stratum.contacts ?? 0), 0);
  const wanted = strata.map((stratum) => {
    const share =
      contacts > 0
        ? 0.5 * (stratum.companies / companies) + 0.5 * ((stratum.contacts ?? 0) / contacts)
        : stratum.companies / companies;
    return stratum.companies === 0 ? 0 : Math.max(1, Math.round(SAMPLE_COMPANIES * share));
  });
  const held = (stratum: Stratum, quota: number) =>
    stratum.companies === 0 ? 0 : (Math.min(quota, stratum.companies) * (stratum.contacts ?? 0)) / stratum.companies;
  const expected = strata.reduce((sum, stratum, i) => sum + held(stratum, wanted[i]!), 0);
  if (expected <= SAMPLE_CONTACTS) return wanted;
  return wanted.map((quota, i) =>
    quota === 0 ? 0 : Math.max(1, Math.round((Math.min(quota, strata[i]!.companies) * SAMPLE_CONTACTS) / expected)),
  );
}

/** Contacts per company the service counted over the strata it counted; undefined where it counted none. */
function priorOf(strata: Stratum[]): number | undefined {
  const counted = strata.filter((stratum) => stratum.contacts !== undefined && stratum.companies > 0);
  const companies = counted.reduce((sum, stratum) => sum + stratum.companies, 0);
  return companies === 0 ? undefined : counted.reduce((sum, stratum) => sum + stratum.contacts!, 0) / companies;
}

/**
 * Each stratum's companies, every stride-th of its first pages so that its quota spans them, and
 * all their contacts; then what the run would write of them (seniority, --per-company, --stale drop,
 * --only-new) and which of those addresses a --stale verify run would pay for.
 */
async function sampleContacts(
  client: ProspectClient,
  strata: Stratum[],
  pageSize: number,
  settings: ContactSettings,
  now: Date,
  keepNew: ((rows: ContactRow[]) => ContactRow[]) | undefined,
  paidBefore: (email: string) => boolean,
  suppression: Suppression,
): Promise<Sample> {
  await checkLocalTechnologies(client, strata[0]!.filters);
  const slots = new Semaphore(settings.concurrency);
  const wanted = quotas(strata);
  const strataSamples = await Promise.all(
    strata.map((stratum, i) => slots.run(() => pickCompanies(client, stratum, wanted[i]!, pageSize, suppression))),
  );
  const sample: Sample = { strata: strataSamples, calls: 0, callMs: [] };
  // A call that comes back full was cut after its least senior contacts, which would skew the
  // seniority shares: the fan-out splits such calls and asks again, as a real run does.
  // The strata's fan-outs share --concurrency: at most that many calls in flight in all.
  const timed: Pick<ProspectClient, 'contacts'> = {
    contacts: (query) =>
      slots.run(async () => {
        const started = performance.now();
        try {
          return await client.contacts(query);
        } finally {
          sample.callMs.push(performance.now() - started);
        }
      }),
  };
  // One fan-out over every stratum's companies, so that its calls pack the strata together; a call
  // that comes back full keeps what it proves, as in a real run.
  const stats = newFanoutStats();
  const items = strataSamples.flatMap((picked) => picked.domains.map((domain) => ({ picked, domain })));
  const options = {
    limit: SAMPLE_LIMIT,
    concurrency: settings.concurrency,
    contactsPerDomain: priorOf(strata),
    // Each company is expected to hold its stratum's contacts per company, as the service counted them.
    expectedContacts: ({ picked: { stratum } }: (typeof items)[number]) =>
      stratum.contacts === undefined || stratum.companies === 0 ? undefined : stratum.contacts / stratum.companies,
  };
  for await (const found of fetchContactsInOrder(timed, items, (item) => item.domain, options, stats)) {
    await tallyDomain(
      found.item.picked.tally,
      suppression.keepContacts(found.contacts),
      found.source,
      settings,
      now,
      keepNew,
      paidBefore,
    );
  }
  sample.calls = stats.calls;
  return sample;
}

/** A stratum's sample: `quota` companies spread evenly over its first pages. */
async function pickCompanies(
  client: ProspectClient,
  stratum: Stratum,
  quota: number,
  pageSize: number,
  suppression: Suppression,
): Promise<StratumSample> {
  const picked: StratumSample = {
    stratum,
    domains: [],
    listed: 0,
    kept: 0,
    excluded: 0,
    tally: { companies: 0, contacts: 0, asked: 0, rows: 0, alreadyExported: 0, toVerify: 0, alreadyPaid: 0 },
  };
  if (quota === 0) return picked;
  const keep = localStackFilter(stratum.filters);
  const span = Math.min(stratum.companies, SAMPLE_PAGES_PER_STRATUM * pageSize);
  // Evenly spaced over the span, a fraction of a row apart if need be: its first rows alone are its largest sites.
  const step = Math.max(1, span / quota);
  const walk = walkCompanies(client, companyQueries(stratum.filters), { readAhead: false });
  let pages = 0;
  for await (const chunk of walk.chunks) {
    for (const row of chunk.rows) {
      picked.listed += 1;
      if (keep && !keep(row)) continue;
      if (!suppression.keepsDomain(row.domain)) {
        picked.excluded += 1;
        continue;
      }
      if (picked.kept >= Math.ceil(picked.domains.length * step) && picked.domains.length < quota)
        picked.domains.push(row.domain.toLowerCase());
      picked.kept += 1;
    }
    pages += 1;
    if (picked.domains.length >= quota || pages >= SAMPLE_PAGES_PER_STRATUM) break;
  }
  picked.tally.companies = picked.domains.length;
  return picked;
}

async function tallyDomain(
  tally: Tally,
  contacts: Contact[],
  source: ContactsMeta['source'] | undefined,
  settings: ContactSettings,
  now: Date,
  keepNew: ((rows: ContactRow[]) => ContactRow[]) | undefined,
  paidBefore: (email: string) => boolean,
): Promise<void> {
  tally.contacts += contacts.length;
  // A run asks with the seniority filter and gets every such contact (calls that fill --limit are split).
  const asked =
    settings.seniority === undefined
      ? contacts
      : contacts.filter((contact) => settings.seniority!.includes(contact.seniority as never));
  tally.asked += asked.length;
  // No verifier: the rows come back unverified, and no unit is spent.
  const result = await contactRowsFor(asked, source, settings, now, undefined, keepNew);
  tally.rows += result.rows.length;
  tally.alreadyExported += result.alreadyExported;
  const emails = new Set(result.rows.filter(needsVerification).map((row) => emailKey(row.business_email)));
  tally.toVerify += emails.size;
  for (const email of emails) if (paidBefore(email)) tally.alreadyPaid += 1;
}

const TALLY_FIELDS = ['companies', 'contacts', 'asked', 'rows', 'alreadyExported', 'toVerify', 'alreadyPaid'] as const;

function addTallies(tallies: Tally[]): Tally {
  return Object.fromEntries(
    TALLY_FIELDS.map((field) => [field, tallies.reduce((sum, tally) => sum + tally[field], 0)]),
  ) as unknown as Tally;
}

/**
 * A stratum's sample scaled to the stratum: by its exact contacts (the share of them that becomes a
 * lead), or, where the service did not count them, by its companies. A stratum whose sampled
 * companies had no contact while the service counts some takes the whole sample's share.
 */
function scaleStratum(picked: StratumSample, pooled: Tally): (field: keyof Tally) => number {
  const { stratum, tally } = picked;
  // --exclude-domains leaves out the share of the stratum its sampled pages had on the list.
  const left = picked.kept + picked.excluded === 0 ? 1 : picked.kept / (picked.kept + picked.excluded);
  if (stratum.contacts !== undefined) {
    const basis = tally.contacts > 0 ? tally : pooled;
    return (field) => (basis.contacts === 0 ? 0 : (left * stratum.contacts! * basis[field]) / basis.contacts);
  }
  const companies =
    stratum.wider && picked.listed > 0 ? (stratum.companies * picked.kept) / picked.listed : stratum.companies;
  return (field) => (tally.companies === 0 ? 0 : (left * companies * tally[field]) / tally.companies);
}

/** The set's companies that the lists leave out, stratum by stratum as the sample saw them; null without any. */
function excludedOf(sample: Sample): number | null {
  if (sample.strata.every((picked) => picked.excluded === 0)) return null;
  return Math.round(
    sample.strata.reduce(
      (sum, picked) =>
        picked.kept + picked.excluded === 0
          ? sum
          : sum + (picked.stratum.companies * picked.excluded) / (picked.kept + picked.excluded),
      0,
    ),
  );
}

export function estimateRun(
  options: PipelineOptions,
  settings: ContactSettings,
  budget: number | undefined,
  size: SetSize | undefined,
  sample: Sample,
  companyMs: number[],
  pageSize: number,
): DryRunEstimate {
  const pooled = addTallies(sample.strata.map((picked) => picked.tally));
  const scales = sample.strata.map((picked) => scaleStratum(picked, pooled));
  const setCompanies =
    size?.companies ??
    Math.round(
      sample.strata.reduce(
        (sum, picked) => sum + (picked.listed > 0 ? (picked.stratum.companies * picked.kept) / picked.listed : 0),
        0,
      ),
    );
  const excludedCompanies = excludedOf(sample);
  const left = setCompanies - (excludedCompanies ?? 0);
  // --max below what is left: the run does that many companies, and the figures are scaled down to them.
  const maxCompanies = options.max !== undefined && options.max < left ? options.max : null;
  const companies = maxCompanies ?? left;
  const share = maxCompanies === null || left === 0 ? 1 : maxCompanies / left;
  const scale = (field: keyof Tally) => Math.round(share * scales.reduce((sum, scaled) => sum + scaled(field), 0));
  const leads = scale('rows');
  const addressesToVerify = options.stale === 'verify' ? scale('toVerify') : 0;
  const alreadyPaid = options.stale === 'verify' ? scale('alreadyPaid') : 0;
  const units = Math.min(Math.max(addressesToVerify - alreadyPaid, 0), budget ?? Number.POSITIVE_INFINITY);
  const mean = (values: number[]) =>
    values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
  const companyPages = Math.ceil(companies / pageSize);
  // The fewest calls for the run's contacts, times what the sample's own calls took over their fewest.
  const fewest = (domains: number, contacts: number) =>
    Math.max(
      Math.ceil(domains / MAX_DOMAINS_PER_CALL),
      Math.ceil(contacts / Math.min(settings.limit, MAX_CONTACTS_PER_CALL)),
    );
  const sampleFewest = fewest(pooled.companies, pooled.contacts);
  const contactCalls = Math.ceil(
    fewest(companies, scale('asked')) * (sampleFewest > 0 ? Math.max(1, sample.calls / sampleFewest) : 1),
  );
  // Contacts calls and verifications run `concurrency` at once; a verification takes about a contacts call's time.
  const seconds =
    (companyPages * mean(companyMs) + ((contactCalls + units) * mean(sample.callMs)) / settings.concurrency) / 1000;
  return {
    companies: setCompanies,
    contacts: size?.contacts,
    excludedCompanies,
    maxCompanies,
    countedBy: size?.byService ? 'service' : 'sample',
    sample: {
      ...pooled,
      calls: sample.calls,
      strata: sample.strata.filter((picked) => picked.tally.companies > 0).length,
    },
    leads,
    alreadyExported: scale('alreadyExported'),
    staleShare: leads === 0 ? 0 : scale('toVerify') / leads,
    addressesToVerify,
    alreadyPaid,
    units,
    seconds,
  };
}

function dryRunText(estimate: DryRunEstimate, options: PipelineOptions, budget: number | undefined): string {
  const about = (n: number) => `about ${formatCount(n)}`;
  const lines = [
    `Dry run: nothing was spent and nothing was written.`,
    `Set: ${countOf(estimate.companies, 'company', 'companies')}` +
      (estimate.contacts === undefined
        ? ' (estimated from the sample)'
        : `, ${countOf(estimate.contacts, 'named contact')}`) +
      ` (${estimate.countedBy === 'service' ? 'counted by the service' : 'the service counted a wider set'}).`,
    ...(estimate.excludedCompanies === null
      ? []
      : [
          `--exclude-domains: about ${formatCount(estimate.excludedCompanies)} of them are left out ` +
            '(estimated from the pages sampled).',
        ]),
    ...(estimate.maxCompanies === null
      ? []
      : [
          `--max ${formatCount(estimate.maxCompanies)}: the run stops after that many companies; ` +
            'the figures below are for them.',
        ]),
    `Sample: ${countOf(estimate.sample.companies, 'company', 'companies')} of ` +
      `${countOf(estimate.sample.strata, 'employee range')}, ${countOf(estimate.sample.contacts, 'contact')} in ` +
      `${countOf(estimate.sample.calls, 'contacts call')}; the figures below are scaled from it, range by range.`,
    `Leads written: ${about(estimate.leads)}.`,
  ];
  if (options.onlyNew)
    lines.push(`--only-new leaves out ${about(estimate.alreadyExported)} leads exported by earlier runs.`);
  lines.push(
    `Stale or undated addresses: ${(estimate.staleShare * 100).toFixed(1)}% of the leads ` +
      `(--max-age ${options.maxAge}).`,
  );
  if (options.stale === 'verify') {
    const cap = budget === undefined ? 'no cap' : `--verify-budget ${formatCount(budget)}`;
    lines.push(
      `Verification: ${about(estimate.addressesToVerify)} addresses to check, ` +
        `${about(estimate.alreadyPaid)} already paid for in the ledger (estimated from the sample); ` +
        `${about(estimate.units)} ${estimate.units === 1 ? 'unit' : 'units'} to pay (${cap}).`,
    );
  }
  lines.push(
    `Time: about ${durationText(estimate.seconds)} at the latency observed ` +
      `(--concurrency ${formatCount(options.concurrency)}).`,
  );
  return `${lines.join('\n')}\n`;
}

function durationText(seconds: number): string {
  if (seconds < 60) return `${Math.max(1, Math.round(seconds))} s`;
  const minutes = Math.round(seconds / 60);
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
