import { Argument, type Command } from 'commander';
import { CONFIG_KEYS, CONFIG_KEY_SPECS, type ConfigKey, type ConfigKeySpec } from '../config/keys.js';
import { configFilePath } from '../config/paths.js';
import { redactSecret, withoutPassword } from '../util/redact.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import type { settingOf } from '../config/precedence.js';
import type { RunContext } from '../runtime/context.js';
import { declareCommand } from './command-tree.js';
import type { CommandRunner } from './options.js';

export function registerConfigCommand(program: Command, run: CommandRunner): void {
  declareCommand(
    program,
    'config',
    { summary: 'show and change settings: the key, the service address, defaults for flags' },
    (config) => defineConfig(config, run),
  );
}

function defineConfig(config: Command, run: CommandRunner): void {
  config
    .description(
      'Settings kept in a config file in your user config directory (`prospect config path` shows where; ' +
        'PROSPECT_CONFIG_DIR moves it), readable by you alone (mode 0600). A flag wins over the environment ' +
        '(PROSPECT_API_KEY, PROSPECT_BASE_URL, PROSPECT_CURSOR_PARAM), which wins over this file, which wins over ' +
        'the default.',
    )
    .addHelpText(
      'after',
      `
Keys:
${keyTable()}

Examples:
  $ printf %s "$PROSPECT_KEY" | prospect config set api-key
  $ prospect config set base-url https://api.example.com
  $ prospect config set max-age 6m
  $ prospect config list`,
    );
  defineConfigSubcommands(config, run);
}

/** set, get, unset, list, path: each a subcommand with its examples. */
function defineConfigSubcommands(config: Command, run: CommandRunner): void {
  config
    .command('set')
    .description(
      'set a key; api-key is read from stdin or a hidden prompt, never from the command line, and so is a ' +
        'proxy or state-url given without a value (the way to set one with a password)',
    )
    .addArgument(keyArgument())
    .argument('[value]', 'the value (not for api-key; for proxy and state-url, only without a password)')
    .addHelpText(
      'after',
      `
Examples:
  $ prospect config set api-key                      # prompts; nothing is echoed
  $ printf %s "$PROSPECT_KEY" | prospect config set api-key
  $ prospect config set concurrency 8
  $ prospect config set format csv`,
    )
    .action((key: ConfigKey, value: string | undefined) => run((ctx) => setSetting(ctx, key, value)));

  config
    .command('get')
    .description("print a key's value from the config file (api-key redacted to its last 4 characters)")
    .addArgument(keyArgument())
    .addHelpText(
      'after',
      `
Examples:
  $ prospect config get base-url
  $ prospect config get api-key                      # …f00d`,
    )
    .action((key: ConfigKey) => run((ctx) => getSetting(ctx, key)));

  config
    .command('unset')
    .description('remove a key from the config file (the default applies again)')
    .addArgument(keyArgument())
    .addHelpText(
      'after',
      `
Examples:
  $ prospect config unset max-age
  $ prospect config unset api-key`,
    )
    .action((key: ConfigKey) => run((ctx) => unsetSetting(ctx, key)));

  config
    .command('list')
    .description('every key with the value in effect and where it comes from (api-key redacted)')
    .addHelpText(
      'after',
      `
Examples:
  $ prospect config list
  $ PROSPECT_CONFIG_DIR=~/.prospect-staging prospect config list`,
    )
    .action(() => run((ctx) => listSettings(ctx)));

  config
    .command('path')
    .description('print where the config file is (it may not exist yet)')
    .addHelpText(
      'after',
      `
Examples:
  $ prospect config path
  $ "$EDITOR" "$(prospect config path)"`,
    )
    .action(() => run(async (ctx) => print(ctx, configFilePath(ctx.env))));
}

function keyArgument(): Argument {
  return new Argument('<key>', `one of: ${CONFIG_KEYS.join(', ')}`).choices(CONFIG_KEYS);
}

function keyTable(): string {
  const width = Math.max(...CONFIG_KEYS.map((key) => key.length));
  return CONFIG_KEYS.map((key) => `  ${key.padEnd(width)}  ${CONFIG_KEY_SPECS[key].summary}`).join('\n');
}

async function setSetting(ctx: RunContext, key: ConfigKey, value: string | undefined): Promise<number> {
  const spec = CONFIG_KEY_SPECS[key];
  if (spec.secret && value !== undefined) throw secretOnCommandLine(key);
  const { openConfigStore } = await import('../config/store.js');
  // Opened first: a corrupt file is reported before anyone types a key into a prompt.
  const store = await openConfigStore(ctx.env);
  const fromInput = spec.secret || (spec.url === true && value === undefined);
  const stored = await checkedValue(key, fromInput ? await readSecretValue(ctx, key) : requireValue(key, value));
  store.set(key, stored);
  ctx.reporter.info(`Set ${key} to ${shown(spec, stored)} in ${store.path}.`);
  if (!fromInput && spec.url && withoutPassword(String(value)) !== value)
    ctx.reporter.caveat(passwordOnCommandLine(key));
  const { settingOf } = await import('../config/precedence.js');
  const inEffect = settingOf(key, { env: ctx.env, config: () => stored });
  if (inEffect?.source === 'environment')
    ctx.reporter.warn(`${inEffect.where} is set in this environment and takes precedence over the config file.`);
  return ExitCode.ok;
}

function secretOnCommandLine(key: ConfigKey): UsageError {
  // The value is deliberately not repeated: this message may end up in a log.
  return new UsageError(
    `refusing to take ${key} from the command line: it would stay in your shell history and be visible to other ` +
      `users in \`ps\`.`,
    `Pipe it in (printf %s "$KEY" | prospect config set ${key}) or run \`prospect config set ${key}\` ` +
      'on a terminal and paste it at the prompt. ' +
      'If you just typed a real key, it is now in your shell history: consider replacing it.',
  );
}

/**
 * A URL's password on the command line: kept (a cron line may depend on it), but said, as api-key's
 * refusal says, since it is now in the shell history and was visible in `ps`.
 */
function passwordOnCommandLine(key: ConfigKey): string {
  return (
    `the ${key} password was given on the command line: it is now in your shell history, and other users ` +
    `could see it in \`ps\`. Consider changing it, and set the URL with \`printf %s "$URL" | prospect config ` +
    `set ${key}\` or at the hidden prompt of \`prospect config set ${key}\`.`
  );
}

/** How the prompt and its errors name what is read. */
const INPUT_LABELS: Partial<Record<ConfigKey, string>> = { proxy: 'proxy URL', 'state-url': 'state URL' };

async function readSecretValue(ctx: RunContext, key: ConfigKey): Promise<string> {
  const { readSecret } = await import('../config/secret-input.js');
  return readSecret(
    { stdin: ctx.stdin, prompt: ctx.stderr },
    INPUT_LABELS[key] ?? (key === 'api-key' ? 'API key' : key.replace('-', ' ')),
    key,
  );
}

function requireValue(key: ConfigKey, value: string | undefined): string {
  if (value !== undefined) return value;
  throw new UsageError(
    `config set ${key} needs a value.`,
    `For example: prospect config set ${key} ${CONFIG_KEY_SPECS[key].example}`,
  );
}

async function checkedValue(key: ConfigKey, text: string): Promise<string | number> {
  const { parseConfigValue, refusal } = await import('../config/validate.js');
  try {
    return parseConfigValue(key, text);
  } catch (error) {
    const { reason, hint } = refusal(error);
    throw new UsageError(`cannot set ${key}: ${reason}.`, hint);
  }
}

async function getSetting(ctx: RunContext, key: ConfigKey): Promise<number> {
  const { readConfigFile } = await import('../config/store.js');
  const path = configFilePath(ctx.env);
  const stored = readConfigFile(path)[key];
  if (stored === undefined || stored === null) {
    ctx.reporter.info(`${key} is not set in ${path}.`);
    return ExitCode.ok;
  }
  return print(ctx, shown(CONFIG_KEY_SPECS[key], stored));
}

async function unsetSetting(ctx: RunContext, key: ConfigKey): Promise<number> {
  const { openConfigStore } = await import('../config/store.js');
  const store = await openConfigStore(ctx.env);
  ctx.reporter.info(store.unset(key) ? `Removed ${key} from ${store.path}.` : `${key} was not set in ${store.path}.`);
  return ExitCode.ok;
}

interface Setting {
  key: ConfigKey;
  value: string;
  source: string;
}

async function listSettings(ctx: RunContext): Promise<number> {
  const [{ readConfigFile }, { storedValueProblem }, { settingOf }] = await Promise.all([
    import('../config/store.js'),
    import('../config/validate.js'),
    import('../config/precedence.js'),
  ]);
  const path = configFilePath(ctx.env);
  const file = readConfigFile(path);
  const problemWith = (key: ConfigKey, stored: unknown): string | undefined => storedValueProblem(key, stored)?.reason;
  const settings = CONFIG_KEYS.map((key) => settingInEffect(ctx, key, { stored: file[key], problemWith, settingOf }));
  const keyWidth = Math.max(...settings.map((setting) => setting.key.length));
  const valueWidth = Math.max(...settings.map((setting) => setting.value.length));
  for (const { key, value, source } of settings)
    ctx.stdout.write(`${key.padEnd(keyWidth)}  ${value.padEnd(valueWidth)}  ${source}\n`);
  ctx.reporter.info(`Config file: ${path}`);
  return ExitCode.ok;
}

/** The value a run would use, by the one precedence (src/config/precedence.ts), and where it comes from. */
function settingInEffect(
  ctx: RunContext,
  key: ConfigKey,
  file: {
    stored: unknown;
    problemWith: (key: ConfigKey, stored: unknown) => string | undefined;
    settingOf: typeof settingOf;
  },
): Setting {
  const spec = CONFIG_KEY_SPECS[key];
  const { stored, problemWith } = file;
  const setting = file.settingOf<unknown>(key, {
    flag: key === 'base-url' ? { name: '--base-url', value: ctx.global.baseUrl } : undefined,
    env: ctx.env,
    // Listed as it is, a bad value too, so that it can be found and fixed from here.
    config: () => (stored === null ? undefined : stored),
    fallback: spec.fallback,
  });
  if (setting === undefined) return { key, value: '-', source: 'not set (needed unless --sandbox)' };
  switch (setting.source) {
    case 'flag':
      return { key, value: String(setting.value), source: `flag ${setting.where}` };
    case 'environment':
      return { key, value: shown(spec, setting.value), source: `environment ${setting.where}` };
    case 'config file': {
      const problem = problemWith(key, stored);
      return { key, value: shown(spec, stored), source: problem ? `config file, INVALID: ${problem}` : 'config file' };
    }
    case 'default':
      return { key, value: String(setting.value), source: 'default' };
  }
}

function shown(spec: ConfigKeySpec, value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (spec.secret) return redactSecret(text);
  return spec.url ? withoutPassword(text) : text;
}

async function print(ctx: RunContext, line: string): Promise<number> {
  ctx.stdout.write(`${line}\n`);
  return ExitCode.ok;
}
