/**
 * `prospect sandbox`: runs the local sandbox service until SIGINT or SIGTERM.
 *
 * Contract with scripts and tests: the first line on stdout is the base URL, printed once the port is
 * bound; the keys and plans go to stderr. A bad flag value prints one line on stderr and exits 2
 * (reported through commander, whose errors src/cli.ts maps to the usage exit code).
 */
import type { Command } from 'commander';
// Start-up loads only the sandbox's light modules (README "Start-up").
import { PLANS, SANDBOX_KEYS } from '../sandbox/auth.js';
import { STATS_PATH, todayUtc } from '../sandbox/defaults.js';
import { DEFAULT_FAULT_KINDS } from '../sandbox/fault-kinds.js';
import { isVariantName, VARIANT_NAMES, type VariantName } from '../sandbox/variant-names.js';
import type { RunningSandbox, SandboxOptions } from '../sandbox/index.js';
import { ExitCode } from '../exit-codes.js';
import { addFlags, type FlagValues } from '../options/flag.js';
import { formatCount } from '../ui/format-count.js';
import { declareCommand } from './command-tree.js';
import { DEFAULT_SPIKE_RATE_TEXT, SANDBOX_FLAGS } from './sandbox-flags.js';
import { sandboxCacheDirectory } from '../config/paths.js';

type SandboxFlags = FlagValues<typeof SANDBOX_FLAGS>;

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
  addFlags(command, SANDBOX_FLAGS)
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
      `Variants (--variant, --contract; docs/api-contract.md "Variants"): ${VARIANT_NAMES.join(', ')}.\n`,
    )
    .addHelpText(
      'after',
      `Examples:
  $ prospect sandbox --port 4010 --seed 7
  $ PROSPECT_BASE_URL=http://127.0.0.1:4010 PROSPECT_API_KEY=sandbox-growth prospect companies -t Shopify
  $ prospect sandbox --port 0 --fail-rate 0.2 --rate-limit 5 --latency 200
  $ prospect sandbox --port 0 --fail-rate 0.25 --faults all --fault-seed 42 --latency-spike 800
  $ prospect sandbox --port 0 --fail-rate 1 --faults 503,no-response --faults-after 20
  $ prospect sandbox --port 0 --variant paging-link-header --variant verify-deliverable
  $ curl -s http://127.0.0.1:4010${STATS_PATH}`,
    )
    .action(runSandbox);
}

/** Listens until SIGINT or SIGTERM, after the checks that need more than one flag or a name lookup. */
async function runSandbox(flags: SandboxFlags, command: Command): Promise<void> {
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
  const variants = [...(flags.variant ?? []), ...(await contractVariants(command, flags.contract))];
  const sandbox = await listen(command, { ...toOptions(flags), variants: [...new Set(variants)] });
  printBanner(sandbox, flags, variants);
  await untilStopped();
  await sandbox.close();
}

/** The variants a contract file names: `{"variants": [NAME, ...]}`; anything else is exit 2, naming the file. */
async function contractVariants(command: Command, file: string | undefined): Promise<VariantName[]> {
  if (file === undefined) return [];
  const { readFile } = await import('node:fs/promises');
  const refuse = (why: string): never =>
    command.error(`prospect sandbox: --contract ${file}: ${why}`, {
      exitCode: ExitCode.usage,
      code: 'prospect.sandbox.contract',
    });
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    return refuse(error instanceof SyntaxError ? 'not JSON.' : `cannot be read (${(error as Error).message}).`);
  }
  const names = (parsed as { variants?: unknown } | null)?.variants;
  if (!Array.isArray(names)) return refuse('needs {"variants": [names]}.');
  const unknown = names.filter((name) => typeof name !== 'string' || !isVariantName(name));
  if (unknown.length > 0) return refuse(`unknown variant ${JSON.stringify(unknown[0])}; see --help.`);
  return names as VariantName[];
}

/** Fault flags that are valid alone but would silently do nothing without another one. */
function faultFlagMistake(flags: SandboxFlags): string | undefined {
  if (flags.faults !== undefined && flags.failRate === undefined)
    return '--faults chooses the kinds --fail-rate draws from; add --fail-rate P.';
  if (flags.latencySpikeRate !== undefined && flags.latencySpike === undefined)
    return '--latency-spike-rate needs --latency-spike MS (how long a spike is).';
  return undefined;
}

/** The sandbox's options from the command's flags (the test of each flag's largest value uses it too). */
export function toOptions(flags: SandboxFlags): SandboxOptions {
  return {
    host: flags.host,
    port: flags.port,
    companies: flags.companies,
    seed: flags.seed,
    asOf: flags.asOf ?? todayUtc(),
    // Only a day asked for moves the listing: without one it is the same every day (the reference crawl).
    crawl: flags.asOf?.slice(0, 7),
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
    lieAboutIdempotency: flags.lieAboutIdempotency ?? false,
  };
}

async function listen(command: Command, options: SandboxOptions): Promise<RunningSandbox> {
  const { startSandbox } = await import('../sandbox/index.js');
  try {
    return await startSandbox(options, { datasetCacheDir: sandboxCacheDirectory(process.env) });
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

function printBanner(sandbox: RunningSandbox, flags: SandboxFlags, variants: readonly VariantName[]): void {
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
    flags.lieAboutIdempotency ? 'Idempotency-Key ignored, Idempotent-Replayed: false on every answer' : '',
    variants.length > 0 ? `variants ${[...new Set(variants)].join(', ')}` : '',
  ].filter(Boolean);
  const lines = [
    `prospect sandbox: ${formatCount(flags.companies)} generated companies, seed ${flags.seed}, ` +
      `snapshot ${flags.asOf ?? todayUtc()}, ${crawlOf(sandbox, flags)}` +
      `${faults.length ? `; ${faults.join(', ')}` : ''}.`,
    'Keys (send "Authorization: Bearer <key>"):',
    ...PLANS.map((plan) => `  ${SANDBOX_KEYS[plan].padEnd(17)} ${`${plan} plan`.padEnd(13)} ${endpointsOf(plan)}`),
    `Counters: ${sandbox.url}${STATS_PATH}. Stop with Ctrl-C.`,
  ];
  process.stderr.write(`${lines.join('\n')}\n`);
}

function crawlOf(sandbox: RunningSandbox, flags: SandboxFlags): string {
  return `${flags.asOf === undefined ? 'reference crawl' : 'crawl'} ${sandbox.crawl}`;
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

/** A listen address on this machine, by the client's one loopback rule (loaded when needed: README "Start-up"). */
async function isLoopback(host: string): Promise<boolean> {
  const { isLoopbackHost } = await import('../api/proxy.js');
  return isLoopbackHost(host === '::1' ? '[::1]' : host);
}

function endpointsOf(plan: string): string {
  return plan === 'free' || plan === 'starter' ? 'companies, verify' : 'companies, contacts, verify';
}
