/**
 * The sandbox's options, checked by one schema at its edge (startSandbox): whoever starts it (the
 * `prospect sandbox` command, --sandbox, a test) gets the same defaults and the same refusals.
 * `prospect sandbox` has checked its flags' text already, in the CLI's words (src/commands/sandbox-flags.ts).
 */
import { z } from 'zod';
import {
  DEFAULT_COMPANIES,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_SEED,
  isIsoDay,
  MAX_COMPANIES,
  MAX_LATENCY_MS,
  MAX_PORT,
  MAX_SEED,
  todayUtc,
} from './defaults.js';
import { isCrawlMonth } from './dataset/crawl-month.js';
import { DEFAULT_FAULT_KINDS, FAULT_KIND_NAMES, type FaultKindName } from './fault-kinds.js';
import { VARIANT_NAMES, type VariantName } from './variant-names.js';

export interface SandboxOptions {
  host?: string;
  port?: number;
  companies?: number;
  seed?: number;
  /** Snapshot day, YYYY-MM-DD (default: today in UTC). */
  asOf?: string;
  /**
   * The month whose crawl the companies listing serves, YYYY-MM (`prospect sandbox --as-of` sets it to
   * its date's month). Default: the generated dataset as it is, the crawl of REFERENCE_CRAWL, whatever the day.
   */
  crawl?: string;
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
  /**
   * Ignore the key as `ignoreIdempotencyKey` does, yet answer every call that carries one with
   * `Idempotent-Replayed: false`, as a service that honours it would: a service that lies.
   */
  lieAboutIdempotency?: boolean;
  /** Another service's decisions for open points of the contract (variants.ts); none: the contract's own. */
  variants?: readonly VariantName[];
}

export type ResolvedSandboxOptions = Required<Omit<SandboxOptions, 'rateLimit' | 'crawl'>> & {
  rateLimit: number | undefined;
  crawl: string | undefined;
};

/** Share of requests spiked when only the spike's length is given. */
const DEFAULT_LATENCY_SPIKE_RATE = 0.1;

/** A number within bounds, refused with one message whatever is wrong with it. */
function numberFrom(min: number, max: number, message: string, integer = false) {
  const number = integer ? z.number({ error: message }).int({ error: message }) : z.number({ error: message });
  return number.min(min, { error: message }).max(max, { error: message });
}
const integerFrom = (min: number, max: number, message: string) => numberFrom(min, max, message, true);
const seed = (name: string) => integerFrom(0, MAX_SEED, `${name} must be an integer from 0 to ${MAX_SEED}`);

const SandboxOptionsSchema = z
  .object({
    host: z.string().default(DEFAULT_HOST),
    port: integerFrom(0, MAX_PORT, `port must be an integer from 0 to ${MAX_PORT}`).default(DEFAULT_PORT),
    companies: integerFrom(1, MAX_COMPANIES, `companies must be an integer from 1 to ${MAX_COMPANIES}`).default(
      DEFAULT_COMPANIES,
    ),
    seed: seed('seed').default(DEFAULT_SEED),
    asOf: z
      .string({ error: 'asOf must be a date written YYYY-MM-DD' })
      .refine(isIsoDay, { error: 'asOf must be a date written YYYY-MM-DD' })
      .optional(),
    crawl: z
      .string({ error: 'crawl must be a month written YYYY-MM' })
      .refine(isCrawlMonth, { error: 'crawl must be a month written YYYY-MM' })
      .optional(),
    latencyMs: numberFrom(0, MAX_LATENCY_MS, `latencyMs must be from 0 to ${MAX_LATENCY_MS}`).default(0),
    failRate: numberFrom(0, 1, 'failRate must be from 0 to 1').default(0),
    faults: z
      .array(z.enum(FAULT_KIND_NAMES, { error: faultsMessage }), { error: faultsMessage })
      .min(1, { error: faultsMessage })
      .readonly()
      .default(DEFAULT_FAULT_KINDS),
    faultSeed: seed('faultSeed').optional(),
    faultsAfter: integerFrom(0, Number.MAX_SAFE_INTEGER, 'faultsAfter must be a whole number').default(0),
    latencySpikeMs: numberFrom(0, MAX_LATENCY_MS, `latencySpikeMs must be from 0 to ${MAX_LATENCY_MS}`).default(0),
    latencySpikeRate: numberFrom(0, 1, 'latencySpikeRate must be from 0 to 1').optional(),
    rateLimit: integerFrom(1, Number.MAX_SAFE_INTEGER, 'rateLimit must be a positive integer').optional(),
    recordTraffic: z.boolean().default(false),
    ignoreIdempotencyKey: z.boolean().default(false),
    lieAboutIdempotency: z.boolean().default(false),
    variants: z
      .array(z.enum(VARIANT_NAMES, { error: variantsMessage }), { error: variantsMessage })
      .readonly()
      .default([]),
  })
  .transform((o): ResolvedSandboxOptions => ({
    ...o,
    asOf: o.asOf ?? todayUtc(),
    faultSeed: o.faultSeed ?? o.seed,
    rateLimit: o.rateLimit,
    crawl: o.crawl,
    latencySpikeRate: o.latencySpikeRate ?? (o.latencySpikeMs > 0 ? DEFAULT_LATENCY_SPIKE_RATE : 0),
  }))
  .refine((o) => o.latencySpikeRate === 0 || o.latencySpikeMs > 0, {
    error: 'latencySpikeRate needs latencySpikeMs',
  });

function variantsMessage(): string {
  return `variants must be names of: ${VARIANT_NAMES.join(', ')}`;
}

function faultsMessage(): string {
  return `faults must name at least one fault kind of: ${FAULT_KIND_NAMES.join(', ')}`;
}

/** The options with every default applied; a RangeError naming the first option it cannot take. */
export function resolveSandboxOptions(options: SandboxOptions): ResolvedSandboxOptions {
  const result = SandboxOptionsSchema.safeParse(options);
  if (result.success) return result.data;
  throw new RangeError(`sandbox: ${result.error.issues[0]?.message ?? 'invalid options'}`);
}
