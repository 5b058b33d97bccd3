/**
 * `prospect sandbox`: runs the local sandbox service until SIGINT or SIGTERM.
 *
 * Contract with scripts and tests: the first line on stdout is the base URL, printed once the port is
 * bound; the keys and plans go to stderr. A bad flag value prints one line on stderr and exits 2
 * (reported through commander, whose errors src/cli.ts maps to the usage exit code).
 */
import { InvalidArgumentError, type Command } from 'commander';
// Only the light defaults at start-up: the server and the dataset generator load when the command runs.
import { PLANS, SANDBOX_KEYS } from '../sandbox/auth.js';
import {
  DEFAULT_COMPANIES,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_SEED,
  isIsoDay,
  MAX_COMPANIES,
  STATS_PATH,
  todayUtc,
} from '../sandbox/defaults.js';
import { DEFAULT_FAULT_KINDS, parseFaultKinds, type FaultKindName } from '../sandbox/fault-kinds.js';
import type { RunningSandbox, SandboxOptions } from '../sandbox/index.js';
import { ExitCode } from '../exit-codes.js';
import { formatCount } from '../ui/format-count.js';
import { integerInRange } from '../options/values.js';
import { declareCommand } from './command-tree.js';

interface SandboxFlags {
  host: string;
  port: number;
  companies: number;
  seed: number;
  asOf?: string;
  latency?: number;
  failRate?: number;
  faults?: FaultKindName[];
  faultSeed?: number;
  faultsAfter?: number;
  latencySpike?: number;
  latencySpikeRate?: number;
  rateLimit?: number;
  recordTraffic?: boolean;
  ignoreIdempotency?: boolean;
  public?: boolean;
}

/** The same share as DEFAULT_LATENCY_SPIKE_RATE in src/sandbox/index.ts, repeated to keep start-up light. */
const DEFAULT_SPIKE_RATE_TEXT = '0.1';

export function registerSandboxCommand(program: Command): void {
  declareCommand(
    program,
    'sandbox',
    {
      description:
        'run a local copy of the service over generated data (keys: sandbox-free, -starter, -growth, -scale)',
    },
    defineSandbox,
  );
}

function defineSandbox(command: Command): void {
  command
    .option('--host <address>', 'address to listen on (loopback only unless --public)', DEFAULT_HOST)
    .option('--port <n>', 'port to listen on; 0 picks a free port', integerInRange('--port', 0, 65535), DEFAULT_PORT)
    .option(
      '--companies <n>',
      `companies in the dataset, 1 to ${formatCount(MAX_COMPANIES)}`,
      integerInRange('--companies', 1, MAX_COMPANIES),
      DEFAULT_COMPANIES,
    )
    .option(
      '--seed <n>',
      'dataset seed: the same seed gives the same data',
      integerInRange('--seed', 0, 0xffffffff),
      DEFAULT_SEED,
    )
    .option(
      '--as-of <date>',
      'snapshot day YYYY-MM-DD that contact dates are relative to (default: today, UTC)',
      isoDay,
    )
    .option('--latency <ms>', 'delay added before every API response', integerInRange('--latency', 0, 600_000))
    .option(
      '--fail-rate <p>',
      'share of API requests (0 to 1) that fail, each with a kind drawn from --faults, reproducibly from the fault ' +
        'seed',
      probability('--fail-rate'),
    )
    .option(
      '--faults <kinds>',
      `comma-separated fault kinds --fail-rate draws from, or all (default: ${DEFAULT_FAULT_KINDS.join(',')}; ` +
        `kinds below)`,
      faultKinds,
    )
    .option(
      '--fault-seed <n>',
      'seed of which requests fail and how (default: --seed): other faults, same data',
      integerInRange('--fault-seed', 0, 0xffffffff),
    )
    .option(
      '--faults-after <n>',
      'serve the first N API requests without faults or spikes (a service that goes down mid-run)',
      integerInRange('--faults-after', 0),
    )
    .option(
      '--latency-spike <ms>',
      'add this delay, on top of --latency, to a share of API requests',
      integerInRange('--latency-spike', 1, 600_000),
    )
    .option(
      '--latency-spike-rate <p>',
      `share of API requests (0 to 1) that get --latency-spike (default: ${DEFAULT_SPIKE_RATE_TEXT})`,
      probability('--latency-spike-rate'),
    )
    .option(
      '--rate-limit <n>',
      'requests per second per key; more are answered 429 with Retry-After',
      integerInRange('--rate-limit', 1, 1_000_000),
    )
    .option(
      '--record-traffic',
      `list in ${STATS_PATH} every domain /contacts was asked for and every address a unit was charged for (grows ` +
        `with every call)`,
    )
    .option(
      '--ignore-idempotency',
      'charge every answered /verify call, Idempotency-Key or not, and never confirm a key: a service without ' +
        'idempotency',
    )
    .option('--public', 'allow a non-loopback --host (the sandbox keys are public: anyone who reaches it can use it)')
    .showHelpAfterError(false)
    .addHelpText(
      'after',
      `\nThe base URL is the first line on stdout. Counters: GET ${STATS_PATH} (no key). Stop with Ctrl-C or ` +
        `SIGTERM.\n`,
    )
    .addHelpText(
      'after',
      `Fault kinds (--faults): 500; 502 (an HTML page, as from a proxy); 503 and 429 (Retry-After: 1);
  503-no-retry-after and 429-no-retry-after; drop (closed before any answer); reset-mid-body (headers and
  half the body, then closed); stall-mid-body (headers and half the body, then silence); no-response (no
  headers ever). Which requests fail is drawn from the fault seed and their order of arrival, so the
  same requests in the same order meet the same faults; kinds are dealt from a shuffled deck, so the
  first K faults (K kinds), and each K after them, include each kind once. ${STATS_PATH} counts them by kind.
`,
    )
    .addHelpText(
      'after',
      `Examples:
  $ prospect sandbox --port 4010 --seed 7
  $ PROSPECT_BASE_URL=http://127.0.0.1:4010 PROSPECT_API_KEY=sandbox-growth prospect companies -t Shopify
  $ prospect sandbox --port 0 --fail-rate 0.2 --rate-limit 5 --latency 200
  $ prospect sandbox --port 0 --fail-rate 0.25 --faults all --fault-seed 42 --latency-spike 800
  $ prospect sandbox --port 0 --fail-rate 1 --faults 503,no-response --faults-after 20
  $ curl -s http://127.0.0.1:4010${STATS_PATH}`,
    )
    .action(async (flags: SandboxFlags, command: Command) => {
      if (!flags.public && !(await isLoopback(flags.host))) {
        command.error(
          `prospect sandbox: --host ${flags.host} is not a loopback address; add --public to listen on it (the ` +
            `sandbox keys are public).`,
          {
            exitCode: ExitCode.usage,
            code: 'prospect.sandbox.host',
          },
        );
      }
      const mistake = faultFlagMistake(flags);
      if (mistake !== undefined)
        command.error(`prospect sandbox: ${mistake}`, { exitCode: ExitCode.usage, code: 'prospect.sandbox.faults' });
      const sandbox = await listen(command, toOptions(flags));
      printBanner(sandbox, flags);
      await untilStopped();
      await sandbox.close();
    });
}

/** Fault flags that are valid alone but would silently do nothing without another one. */
function faultFlagMistake(flags: SandboxFlags): string | undefined {
  if (flags.faults !== undefined && flags.failRate === undefined)
    return '--faults chooses the kinds --fail-rate draws from; add --fail-rate P.';
  if (flags.latencySpikeRate !== undefined && flags.latencySpike === undefined)
    return '--latency-spike-rate needs --latency-spike MS (how long a spike is).';
  return undefined;
}

function toOptions(flags: SandboxFlags): SandboxOptions {
  return {
    host: flags.host,
    port: flags.port,
    companies: flags.companies,
    seed: flags.seed,
    asOf: flags.asOf ?? todayUtc(),
    latencyMs: flags.latency,
    failRate: flags.failRate,
    faults: flags.faults,
    faultSeed: flags.faultSeed,
    faultsAfter: flags.faultsAfter,
    latencySpikeMs: flags.latencySpike,
    latencySpikeRate: flags.latencySpikeRate,
    rateLimit: flags.rateLimit,
    recordTraffic: flags.recordTraffic ?? false,
    ignoreIdempotencyKey: flags.ignoreIdempotency ?? false,
  };
}

async function listen(command: Command, options: SandboxOptions): Promise<RunningSandbox> {
  const { startSandbox } = await import('../sandbox/index.js');
  try {
    return await startSandbox(options);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'EADDRINUSE'
        ? `port ${options.port} is in use; pick another --port (0 picks a free one).`
        : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND'
          ? `cannot listen on ${options.host}: no such local address.`
          : code === 'EACCES'
            ? `not allowed to listen on port ${options.port}.`
            : undefined;
    if (reason === undefined) throw error;
    return command.error(`prospect sandbox: ${reason}`, { exitCode: ExitCode.usage, code: 'prospect.sandbox.listen' });
  }
}

function printBanner(sandbox: RunningSandbox, flags: SandboxFlags): void {
  process.stdout.write(`${sandbox.url}\n`);
  const injecting = Boolean(flags.failRate || flags.latencySpike);
  const faults = [
    flags.latency ? `latency ${flags.latency} ms` : '',
    flags.latencySpike
      ? `+${flags.latencySpike} ms on ${flags.latencySpikeRate ?? DEFAULT_SPIKE_RATE_TEXT} of requests`
      : '',
    flags.failRate ? `fail rate ${flags.failRate} (${(flags.faults ?? DEFAULT_FAULT_KINDS).join(', ')})` : '',
    injecting && flags.faultSeed !== undefined ? `fault seed ${flags.faultSeed}` : '',
    injecting && flags.faultsAfter ? `faults after ${flags.faultsAfter} requests` : '',
    flags.rateLimit ? `rate limit ${flags.rateLimit}/s per key` : '',
    flags.ignoreIdempotency ? 'Idempotency-Key ignored' : '',
  ].filter(Boolean);
  const lines = [
    `prospect sandbox: ${formatCount(flags.companies)} generated companies, seed ${flags.seed}, ` +
      `snapshot ${flags.asOf ?? todayUtc()}${faults.length ? `; ${faults.join(', ')}` : ''}.`,
    'Keys (send "Authorization: Bearer <key>"):',
    ...PLANS.map((plan) => `  ${SANDBOX_KEYS[plan].padEnd(17)} ${`${plan} plan`.padEnd(13)} ${endpointsOf(plan)}`),
    `Counters: ${sandbox.url}${STATS_PATH}. Stop with Ctrl-C.`,
  ];
  process.stderr.write(`${lines.join('\n')}\n`);
}

/** Resolves on the first SIGINT or SIGTERM: stopping the sandbox is its normal end (exit 0). */
function untilStopped(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

async function isLoopback(host: string): Promise<boolean> {
  if (host === 'localhost' || host === '::1' || host === '[::1]') return true;
  // node:net only here, not at every start of the CLI.
  const { isIP } = await import('node:net');
  return isIP(host) === 4 && host.startsWith('127.');
}

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

function faultKinds(value: string): FaultKindName[] {
  const parsed = parseFaultKinds(value);
  if (!parsed.ok) throw new InvalidArgumentError(`--faults: ${parsed.reason}.`);
  return parsed.kinds;
}

function endpointsOf(plan: string): string {
  return plan === 'free' || plan === 'starter' ? 'companies, verify' : 'companies, contacts, verify';
}
