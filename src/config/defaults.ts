/**
 * Config values as flag defaults: `max-age` → --max-age, `concurrency` → --concurrency, `format` →
 * --format, on whichever command has the flag, and only where the user did not type it, by the one
 * precedence (src/config/precedence.ts: flag > environment > config file > built-in default).
 */
import { CommanderError, type Command } from 'commander';
import { CliError, ExitCode } from '../exit-codes.js';
import { CONFIGURABLE_FLAGS } from '../options/command-flags.js';
import type { Flag } from '../options/flag.js';
import { settingOf } from './precedence.js';
import type { ConfigValues } from './store.js';

export function applyConfigDefaults(command: Command, values: ConfigValues, env: NodeJS.ProcessEnv = {}): void {
  for (const flag of flagsLeftToDefault(command)) {
    const setting = settingOf<unknown>(flag.config!.key, {
      env,
      fromEnv: (text) => (flag.parse ? flag.parse(text, undefined as never) : text),
      // The config file's values go by the name of the flag they default (--max-age → maxAge).
      config: () => values[flag.name as keyof ConfigValues],
    });
    if (setting !== undefined && setting.source !== 'default')
      command.setOptionValueWithSource(flag.name, setting.value, setting.source === 'environment' ? 'env' : 'config');
  }
}

/**
 * The preAction hook: reads the config file only when the command has a flag it could default, so
 * `config`, `help` and `completion` never read it (and `config set` can repair a bad value). An
 * unusable file stops the run as a usage error (exit 2) naming the file.
 */
export async function applyConfigFileDefaults(command: Command, env: NodeJS.ProcessEnv): Promise<void> {
  if (flagsLeftToDefault(command).length === 0) return;
  const { readConfigValues } = await import('./store.js');
  let values: ConfigValues;
  try {
    values = readConfigValues(env);
  } catch (error) {
    if (error instanceof CliError) throw usageStop(command, error);
    throw error;
  }
  applyConfigDefaults(command, values, env);
}

/** The configurable flags this command has and the user did not give. */
function flagsLeftToDefault(command: Command): Flag[] {
  const has = (name: string) => command.options.some((option) => option.attributeName() === name);
  const notGiven = (name: string) => {
    const source = command.getOptionValueSource(name);
    return source === undefined || source === 'default';
  };
  return CONFIGURABLE_FLAGS.filter(({ name, config }) => {
    const yieldsTo = config?.yieldsTo;
    return has(name) && notGiven(name) && (yieldsTo === undefined || notGiven(yieldsTo));
  });
}

/**
 * Errors thrown from a commander hook bypass the command runner's reporting, so say it here in the
 * runner's words and stop with a CommanderError, which src/cli.ts turns into its exit code.
 */
function usageStop(command: Command, error: CliError): CommanderError {
  const write = command.configureOutput().writeErr ?? ((text: string) => process.stderr.write(text));
  write(`prospect: ${error.message}\n${error.hint ? `${error.hint}\n` : ''}`);
  return new CommanderError(ExitCode.usage, 'prospect.config', error.message);
}
