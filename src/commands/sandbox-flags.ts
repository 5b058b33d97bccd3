/**
 * `prospect sandbox`'s flags, declared as the flag table declares the others (src/options/flag.ts):
 * beside their command rather than in src/options/, which may not reach the sandbox (a separate
 * program: .dependency-cruiser.cjs). Each parser checks its flag's text, in the CLI's words, and is
 * the only check a bad value meets; what it lets through is within the bounds the sandbox's schema
 * holds every other caller of startSandbox to (src/sandbox/options.ts, the same constants).
 */
import { InvalidArgumentError } from 'commander';
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
  STATS_PATH,
} from '../sandbox/defaults.js';
import { DEFAULT_FAULT_KINDS, parseFaultKinds, type FaultKindName } from '../sandbox/fault-kinds.js';

// The kinds `--faults` takes, for completion scripts (which reach the sandbox only through its command).
export { FAULT_KIND_NAMES } from '../sandbox/fault-kinds.js';
import { isVariantName, VARIANT_NAMES, type VariantName } from '../sandbox/variant-names.js';
import { defineFlag } from '../options/flag.js';
import { integerInRange } from '../options/values.js';
import { formatCount } from '../ui/format-count.js';

/** DEFAULT_LATENCY_SPIKE_RATE of src/sandbox/options.ts, copied for start-up (README "Start-up"). */
export const DEFAULT_SPIKE_RATE_TEXT = '0.1';

export const SANDBOX_FLAGS = [
  defineFlag({
    name: 'host',
    flags: '--host <address>',
    help: 'address to listen on (loopback only unless --public)',
    default: DEFAULT_HOST,
  }),
  defineFlag({
    name: 'port',
    flags: '--port <n>',
    help: 'port to listen on; 0 picks a free port',
    parse: integerInRange('--port', 0, MAX_PORT),
    default: DEFAULT_PORT,
  }),
  defineFlag({
    name: 'companies',
    flags: '--companies <n>',
    help: `companies in the dataset, 1 to ${formatCount(MAX_COMPANIES)}`,
    parse: integerInRange('--companies', 1, MAX_COMPANIES),
    default: DEFAULT_COMPANIES,
  }),
  defineFlag({
    name: 'seed',
    flags: '--seed <n>',
    help: 'dataset seed: the same seed gives the same data',
    parse: integerInRange('--seed', 0, MAX_SEED),
    default: DEFAULT_SEED,
  }),
  defineFlag({
    name: 'asOf',
    flags: '--as-of <date>',
    help:
      'snapshot day YYYY-MM-DD: contact dates are relative to it, companies are the crawl of its month ' +
      '(default: today, UTC, and the reference crawl)',
    parse: isoDay,
  }),
  defineFlag({
    name: 'latency',
    flags: '--latency <ms>',
    help: 'delay added before every API response',
    parse: integerInRange('--latency', 0, MAX_LATENCY_MS),
  }),
  defineFlag({
    name: 'failRate',
    flags: '--fail-rate <p>',
    help:
      'share of API requests (0 to 1) that fail, each with a kind drawn from --faults, reproducibly from the fault ' +
      'seed',
    parse: probability('--fail-rate'),
  }),
  defineFlag({
    name: 'faults',
    flags: '--faults <kinds>',
    help:
      `comma-separated fault kinds --fail-rate draws from, or all (default: ${DEFAULT_FAULT_KINDS.join(',')}; ` +
      `kinds below)`,
    parse: faultKinds,
  }),
  defineFlag({
    name: 'faultSeed',
    flags: '--fault-seed <n>',
    help: 'seed of which requests fail and how (default: --seed): other faults, same data',
    parse: integerInRange('--fault-seed', 0, MAX_SEED),
  }),
  defineFlag({
    name: 'faultsAfter',
    flags: '--faults-after <n>',
    help: 'serve the first N API requests without faults or spikes (a service that goes down mid-run)',
    parse: integerInRange('--faults-after', 0),
  }),
  defineFlag({
    name: 'latencySpike',
    flags: '--latency-spike <ms>',
    help: 'add this delay, on top of --latency, to a share of API requests',
    parse: integerInRange('--latency-spike', 1, MAX_LATENCY_MS),
  }),
  defineFlag({
    name: 'latencySpikeRate',
    flags: '--latency-spike-rate <p>',
    help: `share of API requests (0 to 1) that get --latency-spike (default: ${DEFAULT_SPIKE_RATE_TEXT})`,
    parse: probability('--latency-spike-rate'),
  }),
  defineFlag({
    name: 'rateLimit',
    flags: '--rate-limit <n>',
    help: 'requests per second per key; more are answered 429 with Retry-After',
    parse: integerInRange('--rate-limit', 1, 1_000_000),
  }),
  defineFlag({
    name: 'recordTraffic',
    flags: '--record-traffic',
    help:
      `list in ${STATS_PATH} every domain /contacts was asked for and every address a unit was charged for (grows ` +
      `with every call)`,
  }),
  defineFlag({
    name: 'ignoreIdempotency',
    flags: '--ignore-idempotency',
    help:
      'charge every answered /verify call, Idempotency-Key or not, and never confirm a key: a service without ' +
      'idempotency',
  }),
  defineFlag({
    name: 'lieAboutIdempotency',
    flags: '--lie-about-idempotency',
    help:
      'charge every answered /verify call as --ignore-idempotency does, yet answer each with ' +
      'Idempotent-Replayed: false, as if the key were honoured: a service that lies',
  }),
  defineFlag({
    name: 'variant',
    flags: '--variant <name>',
    help: 'play a service that decided an open point of the contract otherwise (repeatable; names below)',
    parse: variantNames,
  }),
  defineFlag({
    name: 'contract',
    flags: '--contract <file>',
    help: 'the variants to play, from a JSON file: {"variants": ["paging-link-header", ...]}',
  }),
  defineFlag({
    name: 'public',
    flags: '--public',
    help: 'allow a non-loopback --host (the sandbox keys are public: anyone who reaches it can use it)',
  }),
] as const;

function isoDay(value: string): string {
  if (!isIsoDay(value)) throw new InvalidArgumentError('--as-of takes a date written YYYY-MM-DD.');
  return value;
}

function probability(flag: string): (value: string) => number {
  return (value: string) => {
    const n = Number(value.trim());
    if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
      throw new InvalidArgumentError(`${flag} takes a number from 0 to 1.`);
    return n;
  };
}

function variantNames(value: string, previous: VariantName[] | undefined): VariantName[] {
  const name = value.trim().toLowerCase();
  if (!isVariantName(name))
    throw new InvalidArgumentError(`--variant: unknown variant "${name}"; variants are ${VARIANT_NAMES.join(', ')}.`);
  return [...new Set([...(previous ?? []), name])];
}

function faultKinds(value: string): FaultKindName[] {
  const parsed = parseFaultKinds(value);
  if (!parsed.ok) throw new InvalidArgumentError(`--faults: ${parsed.reason}.`);
  return parsed.kinds;
}
