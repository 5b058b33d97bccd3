/** The dry run's statistics: the strata's tallies scaled to the whole set (a ratio estimate, see dry-run.ts). */
import { MAX_CONTACTS_PER_CALL, MAX_DOMAINS_PER_CALL } from '../../api/index.js';
import type { ContactSettings } from '../contacts/options.js';
import type { SetSize } from '../count/set-size.js';
import type { PipelineOptions } from './options.js';
import type { Tally, StratumSample, Sample } from './dry-run-sample.js';

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
