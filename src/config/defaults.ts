/**
 * Config values as flag defaults: `max-age` → --max-age, `concurrency` → --concurrency, `format` →
 * --format, on whichever command has the flag, and only where the user did not type it
 * (flag > config file > built-in default).
 */
import { CommanderError, type Command } from 'commander';
import { CliError, ExitCode } from '../exit-codes.js';
import type { ConfigValues } from './store.js';

interface FlagDefault {
  /** The ConfigValues property, which is also the option's attribute name (--max-age → maxAge). */
  name: 'maxAge' | 'concurrency' | 'format';
  /**
   * An option that, when given, decides instead: `-o leads.json` picks JSON by its extension, as it does without a
   * config file.
   */
  yieldsTo?: string;
}

const FLAG_DEFAULTS: readonly FlagDefault[] = [
  { name: 'maxAge' },
  { name: 'concurrency' },
  { name: 'format', yieldsTo: 'output' },
];

export function applyConfigDefaults(command: Command, values: ConfigValues): void {
  for (const name of flagsLeftToDefault(command)) {
    const value = values[name];
    if (value !== undefined) command.setOptionValueWithSource(name, value, 'config');
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
  applyConfigDefaults(command, values);
}

/** The configurable flags this command has and the user did not give. */
function flagsLeftToDefault(command: Command): Array<FlagDefault['name']> {
  const has = (name: string) => command.options.some((option) => option.attributeName() === name);
  const notGiven = (name: string) => {
    const source = command.getOptionValueSource(name);
    return source === undefined || source === 'default';
  };
  return FLAG_DEFAULTS.filter(
    ({ name, yieldsTo }) => has(name) && notGiven(name) && (yieldsTo === undefined || notGiven(yieldsTo)),
  ).map(({ name }) => name);
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
