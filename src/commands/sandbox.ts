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
import { DEFAULT_COMPANIES, DEFAULT_HOST, DEFAULT_PORT, DEFAULT_SEED, isIsoDay, MAX_COMPANIES, STATS_PATH, todayUtc } from '../sandbox/defaults.js';
import type { RunningSandbox, SandboxOptions } from '../sandbox/index.js';
import { ExitCode } from '../exit-codes.js';
import { integerInRange } from './options.js';

interface SandboxFlags {
  host: string;
  port: number;
  companies: number;
  seed: number;
  asOf?: string;
  latency?: number;
  failRate?: number;
  rateLimit?: number;
  public?: boolean;
}

export function registerSandboxCommand(program: Command): void {
  program
    .command('sandbox')
    .description('run a local copy of the service over generated data (keys: sandbox-free, -starter, -growth, -scale)')
    .option('--host <address>', 'address to listen on (loopback only unless --public)', DEFAULT_HOST)
    .option('--port <n>', 'port to listen on; 0 picks a free port', integerInRange('--port', 0, 65535), DEFAULT_PORT)
    .option('--companies <n>', `companies in the dataset, 1 to ${groupThousands(MAX_COMPANIES)}`, integerInRange('--companies', 1, MAX_COMPANIES), DEFAULT_COMPANIES)
    .option('--seed <n>', 'dataset seed: the same seed gives the same data', integerInRange('--seed', 0, 0xffffffff), DEFAULT_SEED)
    .option('--as-of <date>', 'snapshot day YYYY-MM-DD that contact dates are relative to (default: today, UTC)', isoDay)
    .option('--latency <ms>', 'delay added before every API response', integerInRange('--latency', 0, 600_000))
    .option('--fail-rate <p>', 'share of API requests (0 to 1) answered 500/503 or dropped, reproducibly from the seed', probability)
    .option('--rate-limit <n>', 'requests per second per key; more are answered 429 with Retry-After', integerInRange('--rate-limit', 1, 1_000_000))
    .option('--public', 'allow a non-loopback --host (the sandbox keys are public: anyone who reaches it can use it)')
    .showHelpAfterError(false)
    .addHelpText('after', `\nThe base URL is the first line on stdout. Counters: GET ${STATS_PATH} (no key). Stop with Ctrl-C or SIGTERM.\n`)
    .addHelpText(
      'after',
      `Examples:
  $ prospect sandbox --port 4010 --seed 7
  $ PROSPECT_BASE_URL=http://127.0.0.1:4010 PROSPECT_API_KEY=sandbox-growth prospect companies -t Shopify
  $ prospect sandbox --port 0 --fail-rate 0.2 --rate-limit 5 --latency 200
  $ curl -s http://127.0.0.1:4010${STATS_PATH}`,
    )
    .action(async (flags: SandboxFlags, command: Command) => {
      if (!flags.public && !(await isLoopback(flags.host))) {
        command.error(`prospect sandbox: --host ${flags.host} is not a loopback address; add --public to listen on it (the sandbox keys are public).`, {
          exitCode: ExitCode.usage,
          code: 'prospect.sandbox.host',
        });
      }
      const sandbox = await listen(command, toOptions(flags));
      printBanner(sandbox, flags);
      await untilStopped();
      await sandbox.close();
    });
}

function toOptions(flags: SandboxFlags): SandboxOptions {
  return {
    host: flags.host,
    port: flags.port,
    companies: flags.companies,
    seed: flags.seed,
    asOf: flags.asOf ?? todayUtc(),
    ...(flags.latency !== undefined ? { latencyMs: flags.latency } : {}),
    ...(flags.failRate !== undefined ? { failRate: flags.failRate } : {}),
    ...(flags.rateLimit !== undefined ? { rateLimit: flags.rateLimit } : {}),
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
  const faults = [
    flags.latency ? `latency ${flags.latency} ms` : '',
    flags.failRate ? `fail rate ${flags.failRate}` : '',
    flags.rateLimit ? `rate limit ${flags.rateLimit}/s per key` : '',
  ].filter(Boolean);
  const lines = [
    `prospect sandbox: ${flags.companies.toLocaleString('en-US')} generated companies, seed ${flags.seed}, snapshot ${flags.asOf ?? todayUtc()}${faults.length ? `; ${faults.join(', ')}` : ''}.`,
    'Keys (send "Authorization: Bearer <key>"):',
    ...PLANS.map((plan) => `  ${SANDBOX_KEYS[plan].padEnd(17)} ${`${plan} plan`.padEnd(13)} ${plan === 'free' || plan === 'starter' ? 'companies, verify' : 'companies, contacts, verify'}`),
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

function probability(value: string): number {
  const n = Number(value.trim());
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError('--fail-rate takes a number from 0 to 1.');
  return n;
}

/** 1000000 → "1,000,000" without Intl: toLocaleString would load ICU data at every start (~10 ms). */
function groupThousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
