/**
 * The dry run's scaling, stratum by stratum, on hand-made samples: what each stratum's sample adds to
 * the estimate follows from the numbers below, worked out by hand in each comment.
 */
import { describe, expect, it } from 'vitest';
import { parseContactFlags } from '../../../src/core/contacts/options.js';
import { estimateRun } from '../../../src/core/pipeline/dry-run-estimate.js';
import type { Stratum, StratumSample, Tally } from '../../../src/core/pipeline/dry-run-sample.js';
import { pipelineOptionsSchema } from '../../../src/core/pipeline/job.js';

const flags = {
  technology: ['Shopify'],
  notTechnology: [],
  employeeRange: [],
  country: [],
  limit: 200,
  maxAge: '90d',
  stale: 'verify',
  concurrency: 4,
  format: 'csv',
  escapeFormulas: true,
  cache: true,
  cacheTtl: '30d',
};
const options = pipelineOptionsSchema.parse(flags);
const settings = parseContactFlags(options, new Date('2025-06-30T00:00:00Z'));

function picked(stratum: Partial<Stratum>, tally: Partial<Tally>, listed = 0, kept = 0, excluded = 0): StratumSample {
  const full = {
    companies: 0,
    contacts: 0,
    asked: 0,
    rows: 0,
    alreadyExported: 0,
    toVerify: 0,
    alreadyPaid: 0,
    ...tally,
  };
  return {
    stratum: { filters: options.filters, companies: 0, contacts: 0, wider: false, ...stratum },
    domains: [],
    listed,
    kept,
    excluded,
    tally: full,
  };
}

describe('estimateRun', () => {
  it("scales each stratum by its exact contacts; a stratum whose sample found none takes the whole sample's share", () => {
    const strata = [
      // 10 of 20 sampled contacts became leads: half of the stratum's 1,000 contacts.
      picked({ companies: 500, contacts: 1_000 }, { companies: 50, contacts: 20, rows: 10, toVerify: 4 }),
      // 30 of 300: a tenth of 6,000.
      picked(
        { companies: 40, contacts: 6_000 },
        { companies: 10, contacts: 300, rows: 30, toVerify: 30, alreadyPaid: 6 },
      ),
      // No contact in its sample, 320 counted: the pooled share, 40 of 320 (an eighth), gives 40.
      picked({ companies: 100, contacts: 320 }, { companies: 5 }),
      // No contact counted: nothing, whatever its companies.
      picked({ companies: 900, contacts: 0 }, { companies: 9 }),
    ];
    const estimate = estimateRun(
      options,
      settings,
      undefined,
      { companies: 1_540, contacts: 7_320, byService: true, meta: undefined, queries: [] },
      { strata, calls: 3, callMs: [] },
      [],
      1000,
    );
    expect(estimate.leads).toBe(500 + 600 + 40);
    // To verify: 200 (4/20 of 1,000) + 600 (30/300 of 6,000) + 34/320 of 320 = 834; paid before: 6/300 of 6,000 + 6/320 of 320 = 126.
    expect(estimate.addressesToVerify).toBe(834);
    expect(estimate.alreadyPaid).toBe(126);
    expect(estimate.units).toBe(708);
    expect(estimate.sample).toMatchObject({ companies: 74, contacts: 320, rows: 40, calls: 3, strata: 4 });
  });

  it('without a contact count, scales by companies, and a wider count by the share of listed rows the local filters kept', () => {
    // 2,000 companies listed by the service for the first technology alone; the sample kept 300 of 1,000 listed: 600 in the set.
    // 20 sampled companies gave 50 leads: 2.5 each, 1,500 in all.
    const strata = [
      picked(
        { companies: 2_000, contacts: undefined, wider: true },
        { companies: 20, contacts: 90, rows: 50 },
        1_000,
        300,
      ),
    ];
    const estimate = estimateRun(options, settings, 100, undefined, { strata, calls: 1, callMs: [] }, [], 1000);
    expect(estimate).toMatchObject({ companies: 600, contacts: undefined, countedBy: 'sample', leads: 1_500 });
  });

  it('leaves out the share of each stratum --exclude-domains removed, then scales down to --max', () => {
    // 1,000 companies and 4,000 contacts; of 100 sampled rows 25 were on the list: 250 companies and a quarter of the contacts go.
    // 30 leads from 60 sampled contacts: half of the 3,000 contacts left, 1,500 leads for 750 companies.
    const strata = [
      picked({ companies: 1_000, contacts: 4_000 }, { companies: 75, contacts: 60, rows: 30 }, 100, 75, 25),
    ];
    const size = { companies: 1_000, contacts: 4_000, byService: true, meta: undefined, queries: [] };
    expect(estimateRun(options, settings, undefined, size, { strata, calls: 1, callMs: [] }, [], 1000)).toMatchObject({
      companies: 1_000,
      excludedCompanies: 250,
      maxCompanies: null,
      leads: 1_500,
    });
    // --max 150 of the 750 left: a fifth of them, 300 leads.
    const capped = pipelineOptionsSchema.parse({ ...flags, max: 150 });
    expect(estimateRun(capped, settings, undefined, size, { strata, calls: 1, callMs: [] }, [], 1000)).toMatchObject({
      excludedCompanies: 250,
      maxCompanies: 150,
      leads: 300,
    });
  });
});
