/**
 * The sandbox: a faithful local implementation of the company and contact data service over a
 * generated dataset (`prospect sandbox`, and in-process for tests).
 */
import type { AddressInfo } from 'node:net';
import { REFERENCE_CRAWL } from './dataset/crawl-month.js';
import { buildDataset } from './dataset/dataset.js';
import { todayUtc } from './defaults.js';
import { CompanyQueryEngine } from './company-query.js';
import { ContactStore } from './contact-store.js';
import { CursorCodec } from './cursor.js';
import { FaultPlan } from './faults.js';
import { resolveSandboxOptions, type SandboxOptions } from './options.js';
import { RateLimiter } from './rate-limit.js';
import { companiesRoute, countriesRoute } from './routes-companies.js';
import { contactsRoute } from './routes-contacts.js';
import { verifyRoute } from './routes-verify.js';
import { idempotencyModeOf } from './idempotency.js';
import { createSandboxServer } from './server.js';
import { VariantChain } from './variants.js';
import { sandboxIdentity, StatsCounter, type SandboxStats } from './stats.js';

export { SANDBOX_KEYS } from './auth.js';
export type { SandboxStats } from './stats.js';
export { FAULT_KIND_NAMES, type FaultKindName } from './fault-kinds.js';
export type { SandboxOptions } from './options.js';

export interface RunningSandbox {
  url: string;
  port: number;
  /** What the service is for a ledger of paid results: its seed and size, not its port (stats.ts). */
  identity: string;
  /** The month of the crawl the companies listing serves, YYYY-MM: the one asked for, or the reference. */
  crawl: string;
  stats(): SandboxStats;
  close(): Promise<void>;
}

export { todayUtc };

/** Where the process keeps what it may reuse: `datasetCacheDir` keeps the generated dataset (disk-cache.ts). */
export interface SandboxPlaces {
  datasetCacheDir?: string;
}

/** Builds (or reuses) the dataset and listens. Resolves once the port is bound. */
export async function startSandbox(options: SandboxOptions = {}, places: SandboxPlaces = {}): Promise<RunningSandbox> {
  const config = resolveSandboxOptions(options);
  const dataset = buildDataset({
    companies: config.companies,
    seed: config.seed,
    crawl: config.crawl,
    cacheDir: places.datasetCacheDir,
  });
  const identity = sandboxIdentity(config.seed, config.companies);
  const stats = new StatsCounter(identity, config.recordTraffic);
  const contacts = new ContactStore(dataset, config.asOf);
  const http = createSandboxServer({
    routes: {
      companies: companiesRoute(
        dataset,
        new CompanyQueryEngine(dataset),
        new CursorCodec(config.seed, dataset.size, dataset.crawl),
      ),
      countries: countriesRoute(dataset),
      contacts: contactsRoute(contacts, stats),
      verify: verifyRoute(dataset, contacts, stats, config.asOf, idempotencyModeOf(config)),
    },
    stats,
    faults: new FaultPlan({
      seed: config.faultSeed,
      failRate: config.failRate,
      kinds: config.faults,
      after: config.faultsAfter,
      latencyMs: config.latencyMs,
      spikeMs: config.latencySpikeMs,
      spikeRate: config.latencySpikeRate,
    }),
    rateLimiter: config.rateLimit === undefined ? undefined : new RateLimiter(config.rateLimit),
    variants: new VariantChain(config.variants),
  });
  await new Promise<void>((resolve, reject) => {
    http.server.once('error', reject);
    http.server.listen(config.port, config.host, () => {
      http.server.off('error', reject);
      resolve();
    });
  });
  const port = (http.server.address() as AddressInfo).port;
  return {
    url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
    port,
    identity,
    crawl: dataset.crawl ?? REFERENCE_CRAWL,
    stats: () => stats.snapshot(),
    close: () => http.close(),
  };
}
