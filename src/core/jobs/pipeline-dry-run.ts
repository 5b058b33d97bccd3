/**
 * `pipeline --dry-run`: what a run would do, with nothing spent and no output written. The set's
 * companies and contacts come from the service's count (count.ts's calls); everything that depends
 * on the contacts themselves (how many leads the seniority, --per-company and --stale rules keep,
 * how many addresses are stale, how many are already paid for or were exported before) is measured
 * on a sample: the first companies of the set, their contacts asked in a few calls, and scaled to
 * the set by the service's exact contact count. No paid call is made; the ledger and the state are
 * only read.
 */
import { existsSync } from 'node:fs';
import type { Contact, ContactsMeta, ProspectClient } from '../../api/index.js';
import { CLIENT_DEFAULTS } from '../../api/index.js';
import { emailKey } from '../../io/emails.js';
import { createApiClient } from '../../runtime/api-client.js';
import { resolveConnection } from '../../runtime/connection.js';
import type { RunContext } from '../../runtime/context.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import { companyQueries, localStackFilter, normalizeCountries, validateCompanyFilters, type CompanyFilters } from '../company-filters.js';
import { countSet } from '../company-set-count.js';
import { checkLocalTechnologies, walkCompanies } from '../company-walk.js';
import { parseContactFlags, type ContactSettings } from '../contact-options.js';
import { contactRowsFor } from '../domain-rows.js';
import { fetchContactsInOrder } from '../contacts-fanout.js';
import { exportedKeys } from '../pipeline/exports-ledger.js';
import { leadKey } from '../pipeline/lead-key.js';
import { planPipeline } from '../pipeline/plan.js';
import { StateDirectory } from '../pipeline/state-directory.js';
import { answerAll, askSetSize, serviceQueries } from '../set-size.js';
import { SpendConsent } from '../verification/consent.js';
import { cacheCutoff, openLedger } from '../verification/open-verifier.js';
import { pipelineOptionsSchema, type PipelineFlags, type PipelineOptions } from './pipeline.js';
import { Suppression } from '../suppression.js';
import { runJob } from './runner.js';

/** Companies whose contacts are sampled, and domains per sample call: a few calls, whatever the set. */
export const SAMPLE_COMPANIES = 300;
/**
 * The sample is spread evenly over the set's first pages (free calls), not its first companies: the
 * most popular sites are larger companies, with more contacts and other seniorities than the rest.
 */
const SAMPLE_PAGES = 10;
/** The sample asks with the service's largest limit, so a call is rarely cut. */
const SAMPLE_LIMIT = 1000;
/** What a real run's contacts calls carry on average, as a share of --limit (contacts-fanout's sizing). */
const FILL_OF_LIMIT = 0.6;

interface Sample {
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
  calls: number;
  callMs: number[];
  /** Companies of the walked pages, and how many of them --exclude-domains leaves out. */
  walked: number;
  excluded: number;
}

export interface DryRunEstimate {
  companies: number;
  contacts: number | undefined;
  /** --exclude-domains: the set's companies a run leaves out, estimated from the walked pages; else null. */
  excludedCompanies: number | null;
  /** --max below the companies left: the companies a run does, which the figures below are for; else null. */
  maxCompanies: number | null;
  countedBy: 'service' | 'sample';
  sample: Omit<Sample, 'callMs' | 'walked' | 'excluded'>;
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
  const budget = options.stale === 'verify' ? (await SpendConsent.decide(ctx, { yes: options.yes, budget: options.verifyBudget })).budget : undefined;
  // The lists a real run would apply: the sample never asks for an excluded company, nor counts an excluded address.
  const suppression = await Suppression.load(ctx, options, { domains: true, emails: true });
  planPipeline(ctx, options, budget, suppression.parameters());
  const now = new Date();
  const settings = parseContactFlags(options, now);
  const connection = await resolveConnection(ctx);
  const client = createApiClient(ctx, connection);
  const ledger = openLedger(ctx, connection, { useCache: options.cache, cacheFreshSince: cacheCutoff(options.cacheTtl, now) });
  ctx.onCleanup(() => ledger.close());
  const exported = options.onlyNew && options.state !== undefined && existsSync(options.state) ? await exportedKeys(await StateDirectory.open(options.state)) : new Set<string>();
  let estimate: DryRunEstimate | undefined;

  return runJob(ctx, {
    startedAt,
    progress: 'Sizing the run…',
    output: undefined,
    async work(progress) {
      const timed = timedClient(client);
      const size = await askSetSize(timed.client, options.filters, settings.concurrency);
      progress.update({ done: 0, noun: 'companies sampled' });
      const sample = await sampleContacts(timed.client, options.filters, size?.companies, settings, now, (row) => exported.has(leadKey(row)), (email) => ledger.get(emailKey(email)) !== undefined, suppression);
      const wider = size === undefined ? await widerCount(timed.client, options.filters, settings.concurrency) : undefined;
      estimate = estimateRun(options, settings, budget, size ?? wider!, sample, timed.companyMs, ctx.global.pageSize ?? CLIENT_DEFAULTS.pageSize);
      ctx.stdout.write(options.format === 'json' ? `${JSON.stringify(estimate, null, 2)}\n` : dryRunText(estimate, options, budget));
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
 * The first SAMPLE_COMPANIES companies of the set and all their contacts, asked in calls of
 * SAMPLE_DOMAINS_PER_CALL domains; then what the run would write of them (seniority, --per-company,
 * --stale drop, --only-new) and which of those addresses a --stale verify run would pay for.
 */
async function sampleContacts(
  client: ProspectClient,
  filters: CompanyFilters,
  companies: number | undefined,
  settings: ContactSettings,
  now: Date,
  exportedBefore: (row: Parameters<typeof leadKey>[0]) => boolean,
  paidBefore: (email: string) => boolean,
  suppression: Suppression,
): Promise<Sample> {
  await checkLocalTechnologies(client, filters);
  const keep = localStackFilter(filters);
  const domains: string[] = [];
  // Every stride-th company, so that SAMPLE_COMPANIES of them span the set (or its first pages).
  const stride = Math.max(1, Math.floor((companies ?? SAMPLE_COMPANIES) / SAMPLE_COMPANIES));
  const walk = walkCompanies(client, companyQueries(filters), { readAhead: false });
  let seen = 0;
  let pages = 0;
  let excluded = 0;
  for await (const chunk of walk.chunks) {
    for (const row of chunk.rows) {
      if (keep && !keep(row)) continue;
      if (!suppression.keepsDomain(row.domain)) {
        excluded += 1;
        continue;
      }
      if (seen % stride === 0 && domains.length < SAMPLE_COMPANIES) domains.push(row.domain.toLowerCase());
      seen += 1;
    }
    pages += 1;
    if (domains.length >= SAMPLE_COMPANIES || pages >= SAMPLE_PAGES) break;
  }
  const sample: Sample = { companies: domains.length, contacts: 0, asked: 0, rows: 0, alreadyExported: 0, toVerify: 0, alreadyPaid: 0, calls: 0, callMs: [], walked: seen + excluded, excluded };
  // A call that comes back full was cut after its least senior contacts, which would skew the
  // seniority shares: the fan-out splits such calls and asks again, as a real run does.
  const timed: Pick<ProspectClient, 'contacts'> = {
    async contacts(query) {
      const started = performance.now();
      try {
        return await client.contacts(query);
      } finally {
        sample.callMs.push(performance.now() - started);
      }
    },
  };
  const stats = { calls: 0, splits: 0 };
  for await (const found of fetchContactsInOrder(timed, domains, (domain) => domain, { limit: SAMPLE_LIMIT, concurrency: settings.concurrency, batchesAhead: settings.concurrency }, stats)) {
    await tallyDomain(sample, suppression.keepContacts(found.contacts), found.source, settings, now, exportedBefore, paidBefore);
  }
  sample.calls = stats.calls;
  return sample;
}

async function tallyDomain(
  sample: Sample,
  contacts: Contact[],
  source: ContactsMeta['source'] | undefined,
  settings: ContactSettings,
  now: Date,
  exportedBefore: (row: Parameters<typeof leadKey>[0]) => boolean,
  paidBefore: (email: string) => boolean,
): Promise<void> {
  sample.contacts += contacts.length;
  const asked = settings.seniority === undefined ? contacts : contacts.filter((contact) => settings.seniority!.includes(contact.seniority as never));
  sample.asked += asked.length;
  // A run asks with its --limit: a company that alone fills it gets its first `limit` (most senior first).
  const served = asked.slice(0, settings.limit);
  // No verifier: the rows come back unverified, and no unit is spent.
  const result = await contactRowsFor(served, source, settings, now, undefined, (row) => !exportedBefore(row));
  sample.rows += result.rows.length;
  sample.alreadyExported += result.alreadyExported;
  const emails = new Set(
    result.rows.filter((row) => (row.email_freshness === 'stale' || row.email_freshness === 'unknown') && row.business_email).map((row) => emailKey(row.business_email!)),
  );
  sample.toVerify += emails.size;
  for (const email of emails) if (paidBefore(email)) sample.alreadyPaid += 1;
}

/** The service's count of the set without the technologies it cannot take: the sample then scales companies. */
async function widerCount(client: ProspectClient, filters: CompanyFilters, concurrency: number) {
  const answers = await answerAll(client, companyQueries(filters), concurrency);
  const count = countSet(filters, answers);
  const wider = count.exact ? count : count.wider;
  return { companies: wider?.companies ?? 0, contacts: undefined, byService: false, meta: undefined, queries: serviceQueries(filters) };
}

export function estimateRun(
  options: PipelineOptions,
  settings: ContactSettings,
  budget: number | undefined,
  size: { companies: number; contacts: number | undefined; byService: boolean },
  sample: Sample,
  companyMs: number[],
  pageSize: number,
): DryRunEstimate {
  const perContact = (n: number) => (sample.contacts === 0 ? 0 : n / sample.contacts);
  const perCompany = (n: number) => (sample.companies === 0 ? 0 : n / sample.companies);
  // --exclude-domains leaves out the share of the set the walked pages had on it; --max then caps the rest.
  const excludedCompanies = sample.excluded === 0 ? null : Math.round((size.companies * sample.excluded) / sample.walked);
  const left = size.companies - (excludedCompanies ?? 0);
  const maxCompanies = options.max !== undefined && options.max < left ? options.max : null;
  const companies = maxCompanies ?? left;
  // The service's contact count is exact, and without a per-company cap leads follow contacts; with
  // one they follow companies (each gives at most N), so the sample scales by those instead (and so
  // it does when the run does only part of the set).
  const byContacts = size.contacts !== undefined && size.byService && settings.perCompany === undefined && companies === size.companies;
  const scale = (n: number) => Math.round(byContacts ? size.contacts! * perContact(n) : companies * perCompany(n));
  const leads = scale(sample.rows);
  const ofLeads = (n: number) => (sample.rows === 0 ? 0 : Math.round((leads * n) / sample.rows));
  const addressesToVerify = options.stale === 'verify' ? ofLeads(sample.toVerify) : 0;
  const alreadyPaid = options.stale === 'verify' ? ofLeads(sample.alreadyPaid) : 0;
  const units = Math.min(Math.max(addressesToVerify - alreadyPaid, 0), budget ?? Number.POSITIVE_INFINITY);
  const mean = (values: number[]) => (values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length);
  const companyPages = Math.ceil(companies / pageSize);
  const contactCalls = Math.max(Math.ceil(companies / 100), Math.ceil(scale(sample.asked) / (FILL_OF_LIMIT * settings.limit)));
  // Contacts calls and verifications run `concurrency` at once; a verification takes about a contacts call's time.
  const seconds = (companyPages * mean(companyMs) + ((contactCalls + units) * mean(sample.callMs)) / settings.concurrency) / 1000;
  return {
    companies: size.companies,
    contacts: size.contacts,
    excludedCompanies,
    maxCompanies,
    countedBy: size.byService ? 'service' : 'sample',
    sample: { companies: sample.companies, contacts: sample.contacts, asked: sample.asked, rows: sample.rows, alreadyExported: sample.alreadyExported, toVerify: sample.toVerify, alreadyPaid: sample.alreadyPaid, calls: sample.calls },
    leads,
    alreadyExported: scale(sample.alreadyExported),
    staleShare: sample.rows === 0 ? 0 : sample.toVerify / sample.rows,
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
    `Set: ${countOf(estimate.companies, 'company', 'companies')}${estimate.contacts === undefined ? ' (estimated from the sample)' : `, ${countOf(estimate.contacts, 'named contact')}`} (${estimate.countedBy === 'service' ? 'counted by the service' : 'the service counted a wider set'}).`,
    ...(estimate.excludedCompanies === null ? [] : [`--exclude-domains: about ${formatCount(estimate.excludedCompanies)} of them are left out (estimated from the pages sampled).`]),
    ...(estimate.maxCompanies === null ? [] : [`--max ${formatCount(estimate.maxCompanies)}: the run stops after that many companies; the figures below are for them.`]),
    `Sample: ${countOf(estimate.sample.companies, 'company', 'companies')}, ${countOf(estimate.sample.contacts, 'contact')} in ${countOf(estimate.sample.calls, 'contacts call')}; the figures below are scaled from it.`,
    `Leads written: ${about(estimate.leads)}.`,
  ];
  if (options.onlyNew) lines.push(`--only-new leaves out ${about(estimate.alreadyExported)} leads exported by earlier runs.`);
  lines.push(`Stale or undated addresses: ${(estimate.staleShare * 100).toFixed(1)}% of the leads (--max-age ${options.maxAge}).`);
  if (options.stale === 'verify') {
    const cap = budget === undefined ? 'no cap' : `--verify-budget ${formatCount(budget)}`;
    lines.push(`Verification: ${about(estimate.addressesToVerify)} addresses to check, ${about(estimate.alreadyPaid)} already paid for in the ledger (estimated from the sample); ${about(estimate.units)} ${estimate.units === 1 ? 'unit' : 'units'} to pay (${cap}).`);
  }
  lines.push(`Time: about ${durationText(estimate.seconds)} at the latency observed (--concurrency ${formatCount(options.concurrency)}).`);
  return `${lines.join('\n')}\n`;
}

function durationText(seconds: number): string {
  if (seconds < 60) return `${Math.max(1, Math.round(seconds))} s`;
  const minutes = Math.round(seconds / 60);
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
