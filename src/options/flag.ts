/**
 * A flag, declared once: its commander option (flags, help, parser, default), whose form is its type
 * in the job's options (FlagOutput; checked by the job's zod schema, src/core/shared/flags.ts).
 * Commands add the options (addFlags); jobs build their schema from the same list.
 */
import { Option, type Command } from 'commander';
import type { z } from 'zod';
import type { ConfigKey } from '../config/keys.js';

export interface Flag<Name extends string = string> {
  /** Commander's attribute name (--max-age → maxAge): the key of the job's option. */
  name: Name;
  /** As commander takes them: '-s, --seniority <list>'. A flag without `<value>` is a switch. */
  flags: string;
  help: string;
  /**
   * Reads and bounds the value; its InvalidArgumentError is a usage error (exit 2). Its result's type
   * is the value's type in the job's options.
   */
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
  /**
   * Only where the job reads the value otherwise than its form says (`-o -` is stdout): its schema, a
   * function of zod, which the job loads (README "Start-up").
   */
  schema?: (zod: Zod) => z.ZodType;
}

/** zod, as a job passes it to a flag's schema. */
export type Zod = typeof z;

/** A flag with its exact form kept, so a job's options are typed from its flags. */
export function defineFlag<const F extends Flag>(flag: F): F {
  return flag;
}

type TakesValue<F extends Flag> = F['flags'] extends `${string}<${string}` ? true : false;

/** The value a flag's form gives: one of its choices, its parser's result, a string, or a switch's boolean. */
type FormValue<F extends Flag> = F extends { choices: readonly (infer Choice)[] }
  ? Choice
  : F extends { parse: (...args: never[]) => infer Parsed }
    ? Parsed
    : TakesValue<F> extends true
      ? string
      : boolean;

/** The flag's value in the job's options: a value flag without a default may be absent; a switch is false. */
export type FlagOutput<F extends Flag> = F extends { schema: (zod: never) => infer Schema extends z.ZodType }
  ? z.output<Schema>
  : F extends { default: unknown }
    ? FormValue<F>
    : TakesValue<F> extends true
      ? FormValue<F> | undefined
      : boolean;

/** What commander gives a command for the flag: its value, or nothing when it is absent and has no default. */
export type FlagInput<F extends Flag> = F extends { schema: (zod: never) => infer Schema extends z.ZodType }
  ? z.input<Schema>
  : F extends { default: unknown }
    ? FormValue<F>
    : FormValue<F> | undefined;

/** What commander gives a command for these flags. */
export type FlagValues<Flags extends readonly Flag[]> = {
  [F in Flags[number] as F['name']]: FlagInput<F>;
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
