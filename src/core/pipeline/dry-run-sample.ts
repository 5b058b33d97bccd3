/**
 * The dry run's sample (see dry-run.ts): how many companies each stratum gets, which ones (spread over
 * its first pages), and what a run would keep of their contacts, tallied.
 */
import type { Contact, ContactsMeta, ProspectClient } from '../../api/index.js';
import { MAX_CONTACTS_PER_CALL } from '../../api/index.js';
import { emailKey } from '../../io/emails.js';
import { companyQueries, localRowFilter, type CompanyFilters } from '../companies/filters.js';
import { checkLocalTechnologies, walkCompanies } from '../companies/walk.js';
import type { ContactSettings } from '../contacts/options.js';
import type { ContactRow } from '../contacts/rows.js';
import { contactRowsFor } from '../contacts/domain-rows.js';
import { fetchContactsInOrder, newFanoutStats } from '../contacts/fanout.js';
import { Semaphore } from '../../util/ordered-pool.js';
import { needsVerification } from '../verification/spend-plan.js';
import { Exclusions } from '../shared/exclusion.js';

/** Companies whose contacts are sampled, over all strata: a few calls of 100 domains, whatever the set. */
const SAMPLE_COMPANIES = 1000;
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
export async function sampleContacts(
  client: ProspectClient,
  strata: Stratum[],
  pageSize: number,
  settings: ContactSettings,
  now: Date,
  keepNew: ((rows: ContactRow[]) => ContactRow[]) | undefined,
  paidBefore: (email: string) => boolean,
  exclusions: Exclusions,
): Promise<Sample> {
  await checkLocalTechnologies(client, strata[0]!.filters);
  const slots = new Semaphore(settings.concurrency);
  const wanted = quotas(strata);
  const strataSamples = await Promise.all(
    strata.map((stratum, i) => slots.run(() => pickCompanies(client, stratum, wanted[i]!, pageSize, exclusions))),
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
      exclusions.keepContacts(found.contacts),
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
  exclusions: Exclusions,
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
  const keep = localRowFilter(stratum.filters);
  const span = Math.min(stratum.companies, SAMPLE_PAGES_PER_STRATUM * pageSize);
  // Evenly spaced over the span, a fraction of a row apart if need be: its first rows alone are its largest sites.
  const step = Math.max(1, span / quota);
  const walk = walkCompanies(client, companyQueries(stratum.filters), { readAhead: false });
  let pages = 0;
  for await (const chunk of walk.chunks) {
    for (const row of chunk.rows) {
      picked.listed += 1;
      if (keep && !keep(row)) continue;
      if (!exclusions.keepsDomain(row.domain)) {
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
