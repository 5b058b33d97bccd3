/**
 * A flag, declared once: its commander option (flags, help, parser, default) and its type in the
 * job's options (a zod schema) side by side. Commands add the options (addFlags); jobs build their
 * schema from the same list (src/core/shared/flags.ts).
 */
import { Option, type Command } from 'commander';
import type { z } from 'zod';
import type { ConfigKey } from '../config/keys.js';

export interface Flag<Name extends string = string, Schema extends z.ZodType = z.ZodType> {
  /** Commander's attribute name (--max-age → maxAge): the key of the job's option. */
  name: Name;
  /** As commander takes them: '-s, --seniority <list>'. */
  flags: string;
  help: string;
  /** Reads and bounds the value; its InvalidArgumentError is a usage error (exit 2). */
  parse?: (value: string, previous: never) => unknown;
  /** The only values it takes (commander refuses any other, naming them). */
  choices?: readonly string[];
  /** What applies when neither the command line nor the config file sets it; the schema's default too. */
  default?: unknown;
  /** The config key that sets its default (flag > config file > built-in default). */
  config?: {
    key: ConfigKey;
    /** A flag that, given, decides instead: `-o leads.json` picks JSON by its extension. */
    yieldsTo?: string;
  };
  /** Its type in the job's options: a function of zod, which the job loads (README "Start-up"). */
  schema: (zod: typeof z) => Schema;
}

/** A flag with its name and schema type kept exact, so a job's options are typed from its flags. */
export function defineFlag<const Name extends string, Schema extends z.ZodType>(
  flag: Flag<Name, Schema>,
): Flag<Name, Schema> {
  return flag;
}

/** What commander gives a command for these flags: each value as its flag's schema takes it in. */
export type FlagValues<Flags extends readonly Flag[]> = {
  [F in Flags[number] as F['name']]: z.input<ReturnType<F['schema']>>;
};

function flagOption(flag: Flag): Option {
  const option = new Option(flag.flags, flag.help);
  if (flag.choices !== undefined) option.choices(flag.choices);
  if (flag.parse !== undefined) option.argParser(flag.parse as (value: string, previous: unknown) => unknown);
  if (flag.default !== undefined) option.default(flag.default);
  return option;
}

/** The flags as the command's options, in the order its help lists them. */
export function addFlags(command: Command, flags: readonly Flag[]): Command {
  for (const flag of flags) command.addOption(flagOption(flag));
  return command;
}
