/**
 * `pipeline --dry-run`: what a run would do, with nothing spent and no output written. The set's
 * companies and contacts come from the service's count (count.ts's calls); everything that depends
 * on the contacts themselves (how many leads the seniority, --per-company and --stale rules keep,
 * how many addresses are stale, how many are already paid for or were exported before) is measured
 * on a sample and scaled to the set. No paid call is made; the verification and exports ledgers and
 * the state are only read.
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
import type { ProspectClient } from '../../api/index.js';
import { CLIENT_DEFAULTS } from '../../api/index.js';
import { emailKey } from '../../io/emails.js';
import type { RunContext } from '../../runtime/context.js';
import type { JobDeps } from '../../runtime/job-deps.js';
import {
  companyQueries,
  normalizeCountries,
  validateCompanyFilters,
  type CompanyFilters,
} from '../companies/filters.js';
import { countSet } from '../companies/set-count.js';
import { parseContactFlags } from '../contacts/options.js';
import type { ContactRow } from '../contacts/rows.js';
import { LocalExportsLedger } from './state/exports-ledger.js';
import { planPipeline } from './plan.js';
import { StateDirectory } from './state/state-directory.js';
import { breakdownByQueries, employeeRangeLabels } from '../count/breakdown.js';
import { answerAll, askSetSize, type SetSize } from '../count/set-size.js';
import { SpendConsent } from '../verification/consent.js';
import { cacheCutoff, openVerificationLedger } from '../verification/open-verifier.js';
import { pipelineOptionsSchema, type PipelineFlags } from './options.js';
import { Exclusions } from '../shared/exclusion.js';
import { loadSuppression } from '../suppression/suppression.js';
import { runJob } from '../shared/runner.js';
import type { Stratum } from './dry-run-sample.js';
import { sampleContacts } from './dry-run-sample.js';
import { estimateRun, type DryRunEstimate } from './dry-run-estimate.js';
import { dryRunText } from './dry-run-text.js';
import { jsonSafe } from '../../util/display-safe.js';

export async function runPipelineDryRun(ctx: RunContext, flags: PipelineFlags, deps: JobDeps): Promise<number> {
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
  const exclusions = await Exclusions.load(ctx, options, { domains: true, emails: true }, await loadSuppression(ctx));
  planPipeline(ctx, options, budget, exclusions.parameters());
  const now = deps.now();
  const settings = parseContactFlags(options, now);
  const connection = await deps.connection();
  const client = deps.client(connection);
  const verificationLedger = await openVerificationLedger(ctx, connection, {
    useCache: options.cache,
    cacheFreshSince: cacheCutoff(options.cacheTtl, now),
  });
  ctx.onCleanup(() => verificationLedger.close());
  // --only-new: the same lookup as a run's, in the same exports ledger: nothing of the state's history is loaded.
  const exportsLedger =
    options.onlyNew && options.state !== undefined && existsSync(options.state)
      ? await LocalExportsLedger.openIfAny(await StateDirectory.open(options.state))
      : undefined;
  if (exportsLedger) ctx.onCleanup(() => exportsLedger.close());
  const keepNew = exportsLedger ? (rows: ContactRow[]) => exportsLedger.newOnly(rows) : undefined;
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
        (email) => verificationLedger.get(emailKey(email)) !== undefined,
        exclusions,
      );
      estimate = estimateRun(options, settings, budget, size, sample, timed.companyMs, pageSize);
      ctx.stdout.write(
        options.format === 'json'
          ? `${jsonSafe(JSON.stringify(estimate, null, 2))}\n`
          : dryRunText(estimate, options, budget),
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
