/**
 * `prospect doctor`: what a run would use to reach the service (base URL, proxy, CAs, and where each
 * came from), then each step of a request timed (DNS, TCP, TLS, the HTTP round trip), the key's plan
 * (a companies call of one row, a contacts call of one domain: neither spends a paid unit), the
 * contract decisions of docs/api-contract.md those answers bear out, and the tolerances the client
 * uses. Short timeouts of its own, so a silent host ends it in seconds, not minutes. /verify only
 * with --verify ADDRESS (verify-check.ts).
 */
import {
  bareHost,
  checkBaseUrl,
  CLIENT_DEFAULTS,
  createClient,
  DEFAULT_CONNECT_TIMEOUT_MS,
  describeProxy,
  hostAndPort,
  MAX_RATE_LIMITED_ATTEMPTS,
  portOf,
  RequestError,
  RETRY_DEFAULTS,
  tlsFailureError,
  UnanswerableError,
  type ProspectClient,
} from '../../api/index.js';
import { redactSecret } from '../../util/redact.js';
import { CliError, ExitCode, knownFailure } from '../../exit-codes.js';
import type { Connection } from '../../runtime/connection.js';
import type { NetworkSteps } from './probes.js';
import type { JobDeps } from '../../runtime/job-deps.js';
import { contactsVerdicts, errorVerdicts, pagingVerdicts, type Verdict } from './contract.js';

/** Each step's own limits: a black hole ends the whole check well within 10 s. */
const STEP_TIMEOUT_MS = 3000;
/** The whole check's limit, 429 waits included: a service that keeps saying "too fast" ends it too. */
const DOCTOR_DEADLINE_MS = 20_000;
const REQUEST_TIMEOUT_MS = 4000;
/** A technology any catalog of web technologies lists; a 422 for it still proves the key and the contract. */
const PROBE_TECHNOLOGY = 'WordPress';

export interface DoctorOutput {
  line(text: string): void;
}

/** What the commands would use (--timeout, --max-retries), for the tolerances line. */
export interface Tolerances {
  timeoutMs: number;
  maxRetries: number;
  /** The run's signal (SIGINT, SIGTERM): stops the check wherever it is, a 429's wait included. */
  signal?: AbortSignal | undefined;
}

/** Runs every check, says each as it ends; resolves to the exit code (0: usable). */
export async function diagnose(
  connection: Connection,
  out: DoctorOutput,
  tolerances: Tolerances,
  /** What carries the requests, and the steps under them: the network's, or a test's stand-ins. */
  deps: { transport: JobDeps['transport']; network: NetworkSteps },
  /** --verify ADDRESS: the one paid check (verify-check.ts), consent already given. */
  verifyCheck?: (out: DoctorOutput) => Promise<Verdict[]>,
): Promise<number> {
  // The check every command makes: a base URL that is no URL is a usage error (exit 2), never a TypeError.
  const url = checkBaseUrl(connection.baseUrl);
  const where = hostAndPort(url);
  out.line(`base URL  ${connection.baseUrl} (from ${connection.baseUrlSource})`);
  const { proxy } = connection;
  out.line(`proxy     ${proxy.proxy ? `${describeProxy(proxy.proxy)} (from ${proxy.source})` : `none: ${proxy.why}`}`);
  const trust = url.protocol === 'https:' ? connection.trust.description : 'none needed (plain http on this machine)';
  out.line(`CA        ${trust}`);
  out.line(`key       ${redactSecret(connection.apiKey)}`);
  await checkSteps(connection, url, out, deps.network);
  const deadline = AbortSignal.timeout(DOCTOR_DEADLINE_MS);
  const client = createClient({
    ...deps.transport,
    signal: tolerances.signal ? AbortSignal.any([tolerances.signal, deadline]) : deadline,
    baseUrl: connection.baseUrl,
    apiKey: connection.apiKey,
    cursorParam: connection.cursorParam,
    contract: connection.contract,
    proxy: connection.proxy.proxy,
    ca: connection.trust.ca,
    timeoutMs: REQUEST_TIMEOUT_MS,
    connectTimeoutMs: STEP_TIMEOUT_MS,
    maxRetries: 0,
  });
  let settings: string[];
  const cursorParam = connection.cursorParam ?? CLIENT_DEFAULTS.cursorParam;
  try {
    const verdicts = await checkPlan(client, where, out, cursorParam).catch((error: unknown) => {
      if (tolerances.signal?.aborted) throw error;
      if (!deadline.aborted) {
        out.line(`FAIL HTTP      ${error instanceof Error ? error.message : String(error)}`);
        throw error;
      }
      out.line(`FAIL HTTP      no usable answer within the check's ${DOCTOR_DEADLINE_MS / 1000} s`);
      throw new CliError(
        `${where} gave no usable answer within the check's ${DOCTOR_DEADLINE_MS / 1000} s.`,
        ExitCode.service,
        'A service that keeps answering 429 is rate-limiting this key: try again later.',
      );
    });
    // The one paid call, with the consent given before any call (verify-check.ts): only with --verify.
    if (verifyCheck) verdicts.push(...(await verifyCheck(out)));
    settings = sayVerdicts(out, verdicts);
  } finally {
    await client.close();
  }
  const connectSeconds = Math.min(DEFAULT_CONNECT_TIMEOUT_MS, tolerances.timeoutMs) / 1000;
  const maxDelaySeconds = RETRY_DEFAULTS.maxDelayMs / 1000;
  out.line(
    `tolerances: --timeout ${tolerances.timeoutMs / 1000} s a request (connect ${connectSeconds} s), ` +
      `--max-retries ${tolerances.maxRetries} ` +
      `with backoff from ${RETRY_DEFAULTS.baseDelayMs} ms to ${maxDelaySeconds} s; ` +
      `a 429 waits its Retry-After (at most ${maxDelaySeconds} s) for every request at once, ` +
      `up to ${MAX_RATE_LIMITED_ATTEMPTS} times a request; ` +
      `pages of ${CLIENT_DEFAULTS.pageSize} rows by "${cursorParam}".`,
  );
  if (settings.length > 0) {
    throw new CliError(
      `the service decided ${settings.length === 1 ? 'an open point' : `${settings.length} open points`} ` +
        'of the contract otherwise.',
      ExitCode.service,
      `Set ${settings.map((s) => `\`prospect config set ${s}\``).join(', ')}, then run doctor again.`,
    );
  }
  out.line('The service is usable from here.');
  return ExitCode.ok;
}

/**
 * DNS, TCP and TLS, timed; through a proxy, the connection to the proxy. Throws a CliError (exit 5)
 * at the first that fails.
 */
async function checkSteps(connection: Connection, url: URL, out: DoctorOutput, network: NetworkSteps): Promise<void> {
  const proxy = connection.proxy.proxy;
  const target = proxy ?? url;
  const host = bareHost(target.hostname);
  const port = portOf(target);
  const label = proxy ? 'the proxy ' : '';
  const dns = await step(out, 'DNS', `DNS of ${label}${host}`, () => network.lookUp(host, STEP_TIMEOUT_MS));
  out.line(`ok  DNS       ${label}${host} → ${dns.value.join(', ')} (${dns.ms} ms)`);
  // Every address in turn, as the commands' connections do; the later steps use the one that answered.
  const tcp = await step(out, 'TCP', `TCP to ${label}${host}:${port}`, () =>
    network.connectToAny(dns.value, port, STEP_TIMEOUT_MS),
  );
  for (const failed of tcp.value.failed) out.line(`--  TCP       ${label}${host}:${port} at ${failed}`);
  const address = tcp.value.address;
  out.line(`ok  TCP       ${label}${host}:${port} at ${address} (${tcp.ms} ms)`);
  if (proxy) {
    out.line(`ok  TLS       through the proxy: checked by the HTTP request below`);
    return;
  }
  if (url.protocol !== 'https:') return;
  const tls = await step(out, 'TLS', `TLS with ${host}:${port}`, () =>
    network.shakeHands(host, address, port, connection.trust.ca, STEP_TIMEOUT_MS).catch((error: unknown) => {
      throw planFailure(tlsFailureError(error, url) ?? error);
    }),
  );
  const { protocol, subject, issuer, validTo } = tls.value;
  out.line(
    `ok  TLS       ${protocol}, certificate for ${subject}, issued by ${issuer}, valid until ${validTo} (${tls.ms} ms)`,
  );
}

/** A step of the way; one that fails gets its FAIL line here, and its error (exit 5 or the command's) on stderr. */
async function step<T>(out: DoctorOutput, name: string, what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const failure = error instanceof CliError ? error : stepError(what, error);
    out.line(`FAIL ${name.padEnd(9)} ${failure.message}`);
    throw failure;
  }
}

function stepError(what: string, error: unknown): CliError {
  const code = (error as { code?: unknown }).code;
  const why = error instanceof Error ? error.message : String(error);
  return new CliError(
    `${what} failed: ${why}${typeof code === 'string' && !why.includes(code) ? ` (${code})` : ''}.`,
    ExitCode.service,
    'Check the base URL, the proxy and the network; `prospect doctor` shows where each setting came from.',
  );
}

/**
 * The key's plan and the contract (contract.ts): companies pages at limit=1, one contacts call if the
 * plan allows it, two refused calls for the error bodies. None of them is paid.
 */
async function checkPlan(client: ProspectClient, where: string, out: DoctorOutput, cursorParam: string) {
  const startedAt = performance.now();
  const verdicts: Verdict[] = [];
  try {
    verdicts.push(...(await pagingVerdicts(client, PROBE_TECHNOLOGY, cursorParam)));
    out.line(`ok  HTTP      ${where} answered GET /companies (${Math.round(performance.now() - startedAt)} ms)`);
    out.line('ok  plan      companies: open to this key');
  } catch (error) {
    if (!(error instanceof UnanswerableError)) throw planFailure(error);
    out.line(
      `ok  HTTP      ${where} answered GET /companies with 422 (${Math.round(performance.now() - startedAt)} ms)`,
    );
    out.line('ok  plan      companies: open to this key');
    verdicts.push({ point: 'paging', result: 'could not tell', detail: `${PROBE_TECHNOLOGY} matched nothing` });
  }
  const contacts = await contactsVerdicts(client, PROBE_TECHNOLOGY).catch((error: unknown) => {
    if (error instanceof UnanswerableError) return [];
    throw planFailure(error);
  });
  out.line(
    contacts[0]?.detail.includes("not on this key's plan")
      ? "ok  plan      contacts: not on this key's plan (403 plan_required: Free or Starter); " +
          'companies, count and verify still work'
      : 'ok  plan      contacts: open to this key (Growth plan or higher)',
  );
  verdicts.push(
    ...contacts,
    ...(await errorVerdicts(client, PROBE_TECHNOLOGY).catch((e: unknown) => {
      throw planFailure(e);
    })),
  );
  return verdicts;
}

/** Each verdict on its line; the settings the service needs, if any (the run then fails, exit 5). */
function sayVerdicts(out: DoctorOutput, verdicts: readonly Verdict[]): string[] {
  for (const { point, result, setting, detail } of verdicts) {
    const mark = result === 'matches' ? 'ok' : result === 'differs' ? '--' : '??';
    const said = result === 'differs' && setting ? `differs: set ${setting}` : result;
    out.line(`${mark.padEnd(4)}contract  ${point}: ${said} (${detail})`);
  }
  const settings = verdicts.flatMap((v) => (v.setting ? [v.setting] : []));
  if (verdicts.every((v) => v.result === 'matches'))
    out.line('ok contract: every point checked matches docs/api-contract.md');
  else {
    const differ = verdicts.filter((v) => v.result !== 'matches').map((v) => v.point);
    out.line(
      `The contract was not proved at ${differ.length} point${differ.length === 1 ? '' : 's'}: ${differ.join(', ')}.`,
    );
  }
  return settings;
}

/** A failed call, as the commands would report it (same message, hint and exit code). */
function planFailure(error: unknown): unknown {
  if (!(error instanceof RequestError)) return error;
  const known = knownFailure(error);
  return known ? new CliError(known.message, known.exitCode, known.hint) : error;
}
