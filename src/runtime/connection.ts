import type { ContractSetting, ContractSettings, ProxyDecision, Verdict } from '../api/index.js';
import type { TrustSettings } from '../config/ca-file.js';
import { UsageError } from '../exit-codes.js';
import type { RunContext } from './context.js';
import { sandboxCacheDirectory } from '../config/paths.js';
import { settingOf, type Setting } from '../config/precedence.js';
import { CONFIG_KEY_SPECS } from '../config/keys.js';
import type { ConfigValues } from '../config/store.js';
import type { Plan } from '../sandbox/auth.js';

export interface Connection {
  baseUrl: string;
  apiKey: string;
  cursorParam?: string | undefined;
  /** True when talking to the in-process sandbox (generated data; nothing is paid for). */
  sandbox: boolean;
  /**
   * Which service answers, as the verification ledger is keyed: the origin of the base URL, or
   * for --sandbox its dataset (seed and size), so its random port does not make it a new service.
   */
  serviceIdentity: string;
  /** Where the base URL came from: `--base-url`, an environment variable, the config file, the sandbox. */
  baseUrlSource: string;
  /** The proxy requests go through, and where it came from; or why there is none. */
  proxy: ProxyDecision;
  /** The certificates trusted, and where they came from. */
  trust: TrustSettings;
  /** The cap on an answer in MiB: --max-answer-size, PROSPECT_MAX_ANSWER_SIZE or the config file. */
  maxAnswerSize?: number | undefined;
  /** How the service decided the open points prospect cannot guess (src/api/contract.ts); unset: the contract's. */
  contract?: Partial<ContractSettings> | undefined;
}

const KEY_HINT =
  'Set PROSPECT_API_KEY (or run `prospect config set api-key`), or add --sandbox to try prospect on generated data.';

const BASE_URL_HINT = 'Set PROSPECT_BASE_URL (or `prospect config set base-url URL`, or --base-url), or add --sandbox.';

export interface MissingSetting {
  setting: 'key' | 'base URL';
  message: string;
  hint: string;
}

/** Every setting a run needs and lacks, by the same precedence: doctor names them all, a command the first. */
export async function missingSettings(ctx: RunContext): Promise<MissingSetting[]> {
  if (ctx.global.sandbox) return [];
  const { readConfigValues } = await import('../config/store.js');
  const config = readConfigValues(ctx.env);
  const missing: MissingSetting[] = [];
  if (apiKeySetting(ctx, config) === undefined)
    missing.push({ setting: 'key', message: 'no API key is set.', hint: KEY_HINT });
  if (baseUrlSetting(ctx, config) === undefined)
    missing.push({ setting: 'base URL', message: 'no service address is set.', hint: BASE_URL_HINT });
  return missing;
}

/**
 * Where to connect and with which key. The key is never a command-line flag (it would show in `ps`
 * and shell history). Precedence: flag > environment > config file > default (src/config/precedence.ts).
 */
export async function resolveConnection(ctx: RunContext): Promise<Connection> {
  if (ctx.global.sandbox) {
    ctx.keySource = 'sandbox';
    return startInProcessSandbox(ctx);
  }
  const { readConfigValues } = await import('../config/store.js');
  const config = readConfigValues(ctx.env);
  const apiKey = apiKeySetting(ctx, config);
  if (apiKey === undefined) throw new UsageError('no API key is set.', KEY_HINT);
  ctx.keySource = apiKey.source === 'environment' ? 'environment' : 'config';
  const baseUrl = baseUrlSetting(ctx, config);
  if (baseUrl === undefined) throw new UsageError('no service address is set.', BASE_URL_HINT);
  const cursorParam = settingOf('cursor-param', { env: ctx.env, config: () => config.cursorParam });
  const maxAnswerSize = await maxAnswerSizeOf(ctx, config.maxAnswerSize);
  const contract = await contractSettingsOf(ctx, config);
  const { trustSettings } = await import('../config/ca-file.js');
  const { decideProxy } = await import('../api/proxy.js');
  return {
    baseUrl: baseUrl.value,
    apiKey: apiKey.value,
    sandbox: false,
    cursorParam: cursorParam?.value,
    serviceIdentity: originOf(baseUrl.value),
    baseUrlSource: baseUrl.where,
    proxy: URL.canParse(baseUrl.value)
      ? decideProxy(new URL(baseUrl.value), { setting: config.proxy, env: ctx.env })
      : { proxy: undefined, why: 'the base URL is not a URL' },
    trust: trustSettings(ctx.env, config.caFile),
    maxAnswerSize,
    contract,
  };
}

/** The settings of src/api/contract.ts, by their config names, under the names of ContractSettings. */
const CONTRACT_FIELDS = {
  paging: 'paging',
  'offset-param': 'offsetParam',
  'page-size-param': 'pageSizeParam',
  'page-size-max': 'pageSizeMax',
  'contact-fields': 'contactFields',
  'date-format': 'dateFormat',
  'verify-path': 'verifyPath',
  'verify-method': 'verifyMethod',
  'verify-param': 'verifyParam',
  'verify-statuses': 'verifyStatuses',
} as const satisfies Partial<Record<ContractSetting, keyof ContractSettings & keyof ConfigValues>>;

/**
 * Each contract setting by the one precedence (environment > config file), checked as `config set`
 * checks it; the pairs of contact-fields and verify-statuses as maps. Unset ones are left out.
 */
async function contractSettingsOf(ctx: RunContext, config: ConfigValues): Promise<Partial<ContractSettings>> {
  const { pairsOf, parseContractSetting, refusal } = await import('../config/validate.js');
  const settings: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(CONTRACT_FIELDS) as Array<[ContractSetting, keyof ContractSettings]>) {
    const fromEnv = (text: string) => {
      try {
        return parseContractSetting(key, text);
      } catch (error) {
        const { reason, hint } = refusal(error);
        throw new UsageError(`${CONFIG_KEY_SPECS[key].env}: ${reason}.`, hint);
      }
    };
    const value = settingOf<string | number>(key, { env: ctx.env, fromEnv, config: () => config[field] })?.value;
    if (value === undefined) continue;
    settings[field] =
      field === 'contactFields' || field === 'verifyStatuses' ? Object.fromEntries(pairsOf(String(value), key)) : value;
  }
  return settings as Partial<ContractSettings> & { verifyStatuses?: Record<string, Verdict> };
}

function apiKeySetting(ctx: RunContext, config: ConfigValues): Setting<string> | undefined {
  return settingOf('api-key', { env: ctx.env, config: () => config.apiKey });
}

function baseUrlSetting(ctx: RunContext, config: ConfigValues): Setting<string> | undefined {
  return settingOf('base-url', {
    flag: { name: '--base-url', value: ctx.global.baseUrl },
    env: ctx.env,
    config: () => config.baseUrl,
  });
}

/**
 * --max-answer-size, else PROSPECT_MAX_ANSWER_SIZE (checked as the config key is, and refused even
 * under the flag), else the config file's value; undefined: the client's default.
 */
async function maxAnswerSizeOf(ctx: RunContext, configured: number | undefined): Promise<number | undefined> {
  const { parseMaxAnswerSize, refusal } = await import('../config/validate.js');
  const fromEnv = (text: string) => {
    try {
      return parseMaxAnswerSize(text);
    } catch (error) {
      const { reason } = refusal(error);
      throw new UsageError(`PROSPECT_MAX_ANSWER_SIZE: ${reason.replace(/^max-answer-size /, '')}.`);
    }
  };
  return settingOf('max-answer-size', {
    flag: { name: '--max-answer-size', value: ctx.global.maxAnswerSize },
    env: ctx.env,
    fromEnv,
    config: () => configured,
  })?.value;
}

async function startInProcessSandbox(ctx: RunContext): Promise<Connection> {
  // Commander took only a plan of the flag's choices.
  const plan: Plan = ctx.global.sandboxPlan ?? 'growth';
  const { startSandbox, SANDBOX_KEYS } = await import('../sandbox/index.js');
  const sandbox = await startSandbox(
    { host: '127.0.0.1', port: 0 },
    { datasetCacheDir: sandboxCacheDirectory(ctx.env) },
  );
  ctx.onCleanup(() => sandbox.close());
  ctx.reporter.info(`Using the sandbox at ${sandbox.url} (${plan} plan, generated data, no units spent).`);
  return {
    baseUrl: sandbox.url,
    apiKey: SANDBOX_KEYS[plan],
    sandbox: true,
    serviceIdentity: sandbox.identity,
    baseUrlSource: '--sandbox',
    proxy: { proxy: undefined, why: 'the in-process sandbox is reached directly' },
    trust: { ca: undefined, description: 'none needed (plain http on this machine)' },
    // Only the flag: the environment and the config file are about a real service.
    maxAnswerSize: ctx.global.maxAnswerSize,
  };
}

/** The origin of a base URL; the text itself when it is no URL (the client refuses it with its own message). */
function originOf(baseUrl: string): string {
  return URL.canParse(baseUrl) ? new URL(baseUrl).origin : baseUrl;
}

/**
 * A refused key's hint, told where the key came from: "Set PROSPECT_API_KEY" to someone whose
 * PROSPECT_API_KEY is the rejected key, or "try --sandbox" to someone on the sandbox, sends them in a circle.
 */
export function keyHint(hint: string | undefined, source: RunContext['keySource']): string | undefined {
  if (hint === undefined || source === undefined) return hint;
  if (source === 'sandbox')
    return hint.includes('plan')
      ? 'This sandbox plan does not include it: use --sandbox-plan growth (or scale).'
      : hint.replace(/, or try --sandbox\.$/, '.');
  if (!hint.startsWith('Set PROSPECT_API_KEY')) return hint;
  return source === 'environment'
    ? 'The rejected key is the one in PROSPECT_API_KEY: set it to a valid key (or unset it to use the config ' +
        "file's), or try --sandbox."
    : "The rejected key is the config file's: set a valid one with `prospect config set api-key` (or in " +
        'PROSPECT_API_KEY), or try --sandbox.';
}
