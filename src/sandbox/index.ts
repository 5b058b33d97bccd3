/**
 * The sandbox: a faithful local implementation of the company and contact data service over a
 * generated dataset (`prospect sandbox`, and in-process for tests).
 */
import type { AddressInfo } from 'node:net';
import { buildDataset } from './dataset/dataset.js';
import {
  DEFAULT_COMPANIES,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_SEED,
  isIsoDay,
  MAX_COMPANIES,
  todayUtc,
} from './defaults.js';
import { CompanyQueryEngine } from './company-query.js';
import { ContactStore } from './contact-store.js';
import { CursorCodec } from './cursor.js';
import { DEFAULT_FAULT_KINDS, FAULT_KIND_NAMES, isFaultKindName, type FaultKindName } from './fault-kinds.js';
import { FaultPlan } from './faults.js';
import { RateLimiter } from './rate-limit.js';
import { companiesRoute, countriesRoute } from './routes-companies.js';
import { contactsRoute } from './routes-contacts.js';
import { verifyRoute } from './routes-verify.js';
import { createSandboxServer } from './server.js';
import { sandboxIdentity, StatsCounter, type SandboxStats } from './stats.js';

export { SANDBOX_KEYS } from './auth.js';
export type { SandboxStats } from './stats.js';
export { FAULT_KIND_NAMES, type FaultKindName } from './fault-kinds.js';

export interface SandboxOptions {
  host?: string;
  port?: number;
  companies?: number;
  seed?: number;
  /** Snapshot day, YYYY-MM-DD (default: today in UTC). */
  asOf?: string;
  latencyMs?: number;
  /** Share (0 to 1) of API requests that fail, each with a kind drawn from `faults`. */
  failRate?: number;
  /** The fault kinds `failRate` draws from (default: 500, 503, drop). */
  faults?: readonly FaultKindName[];
  /** Seeds which requests fail and how (default: `seed`), so the faults can change while the data stays. */
  faultSeed?: number;
  /** The first N API requests get no fault and no spike (default 0): a service that goes down mid-run. */
  faultsAfter?: number;
  /** Milliseconds added, on top of `latencyMs`, to a share (`latencySpikeRate`) of API requests. */
  latencySpikeMs?: number;
  /** Share of API requests that get the spike (default 0.1 when `latencySpikeMs` is set). */
  latencySpikeRate?: number;
  /** Requests per second per key; undefined: no limit. */
  rateLimit?: number;
  /** Keep every domain /contacts was asked for and every address charged, listed by /_sandbox/stats. */
  recordTraffic?: boolean;
  /** Charge every answered /verify call, Idempotency-Key or not: a service that does not honour the header. */
  ignoreIdempotencyKey?: boolean;
}

/** Share of requests spiked when only the spike's length is given. */
const DEFAULT_LATENCY_SPIKE_RATE = 0.1;

export interface RunningSandbox {
  url: string;
  port: number;
  /** What the service is for a ledger of paid results: its seed and size, not its port (stats.ts). */
  identity: string;
  stats(): SandboxStats;
  close(): Promise<void>;
}

export { todayUtc };

/** Builds (or reuses) the dataset and listens. Resolves once the port is bound. */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const config = resolveOptions(options);
  const dataset = buildDataset({ companies: config.companies, seed: config.seed });
  const identity = sandboxIdentity(config.seed, config.companies);
  const stats = new StatsCounter(identity, config.recordTraffic);
  const contacts = new ContactStore(dataset, config.asOf);
  const http = createSandboxServer({
    routes: {
      companies: companiesRoute(dataset, new CompanyQueryEngine(dataset), new CursorCodec(config.seed, dataset.size)),
      countries: countriesRoute(dataset),
      contacts: contactsRoute(contacts, stats),
      verify: verifyRoute(dataset, contacts, stats, config.asOf, {
        honourIdempotencyKey: !config.ignoreIdempotencyKey,
      }),
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
    stats: () => stats.snapshot(),
    close: () => http.close(),
  };
}

type ResolvedOptions = Required<Omit<SandboxOptions, 'rateLimit'>> & { rateLimit: number | undefined };

function resolveOptions(o: SandboxOptions): ResolvedOptions {
  const seed = o.seed ?? DEFAULT_SEED;
  const latencySpikeMs = o.latencySpikeMs ?? 0;
  const config: ResolvedOptions = {
    host: o.host ?? DEFAULT_HOST,
    port: o.port ?? DEFAULT_PORT,
    companies: o.companies ?? DEFAULT_COMPANIES,
    seed,
    asOf: o.asOf ?? todayUtc(),
    latencyMs: o.latencyMs ?? 0,
    failRate: o.failRate ?? 0,
    faults: o.faults ?? DEFAULT_FAULT_KINDS,
    faultSeed: o.faultSeed ?? seed,
    faultsAfter: o.faultsAfter ?? 0,
    latencySpikeMs,
    latencySpikeRate: o.latencySpikeRate ?? (latencySpikeMs > 0 ? DEFAULT_LATENCY_SPIKE_RATE : 0),
    rateLimit: o.rateLimit,
    recordTraffic: o.recordTraffic ?? false,
    ignoreIdempotencyKey: o.ignoreIdempotencyKey ?? false,
  };
  const check = (ok: boolean, message: string) => {
    if (!ok) throw new RangeError(`sandbox: ${message}`);
  };
  check(
    Number.isInteger(config.port) && config.port >= 0 && config.port <= 65535,
    'port must be an integer from 0 to 65535',
  );
  check(
    Number.isInteger(config.companies) && config.companies >= 1 && config.companies <= MAX_COMPANIES,
    `companies must be an integer from 1 to ${MAX_COMPANIES}`,
  );
  check(
    Number.isInteger(config.seed) && config.seed >= 0 && config.seed <= 0xffffffff,
    'seed must be an integer from 0 to 4294967295',
  );
  check(isIsoDay(config.asOf), 'asOf must be a date written YYYY-MM-DD');
  check(
    Number.isFinite(config.latencyMs) && config.latencyMs >= 0 && config.latencyMs <= 600_000,
    'latencyMs must be from 0 to 600000',
  );
  check(
    Number.isFinite(config.failRate) && config.failRate >= 0 && config.failRate <= 1,
    'failRate must be from 0 to 1',
  );
  check(
    config.faults.length > 0 && config.faults.every((name) => isFaultKindName(name)),
    `faults must name at least one fault kind of: ${FAULT_KIND_NAMES.join(', ')}`,
  );
  check(
    Number.isInteger(config.faultSeed) && config.faultSeed >= 0 && config.faultSeed <= 0xffffffff,
    'faultSeed must be an integer from 0 to 4294967295',
  );
  check(Number.isSafeInteger(config.faultsAfter) && config.faultsAfter >= 0, 'faultsAfter must be a whole number');
  check(
    Number.isFinite(config.latencySpikeMs) && config.latencySpikeMs >= 0 && config.latencySpikeMs <= 600_000,
    'latencySpikeMs must be from 0 to 600000',
  );
  check(
    Number.isFinite(config.latencySpikeRate) && config.latencySpikeRate >= 0 && config.latencySpikeRate <= 1,
    'latencySpikeRate must be from 0 to 1',
  );
  check(config.latencySpikeRate === 0 || config.latencySpikeMs > 0, 'latencySpikeRate needs latencySpikeMs');
  check(
    config.rateLimit === undefined || (Number.isInteger(config.rateLimit) && config.rateLimit >= 1),
    'rateLimit must be a positive integer',
  );
  return config;
}
