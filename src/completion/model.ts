/**
 * What the completion scripts complete, read off the commander program itself, so a new command or
 * flag is completed without anyone touching the scripts.
 */
import type { Command, Option } from 'commander';

export interface CompletedOption {
  short?: string;
  long?: string;
  description: string;
  /** Takes a value (`--format <format>`); the next word is that value, not a command. */
  takesValue: boolean;
  /** The value's name in the help (`format` for `--format <format>`). */
  valueName?: string;
  /** Its fixed values, if it has them. */
  values?: readonly string[];
  /** The value is a comma-separated list of `values` (--seniority cxo,vp). */
  commaList: boolean;
  /** The value names a file or a directory. */
  path?: 'file' | 'directory';
  /** May be given more than once (-t Shopify -t WordPress). */
  repeatable: boolean;
}

export interface CompletedCommand {
  name: string;
  description: string;
  options: CompletedOption[];
  subcommands: CompletedCommand[];
  /** Fixed values for its positional arguments (config keys, shell names, help topics). */
  argumentValues: readonly string[];
}

/** Values commander cannot know: flags checked by the command itself rather than by .choices(). */
interface FixedValues {
  [longFlag: string]: { values: readonly string[]; commaList?: boolean };
}

export interface ModelExtras {
  fixedValues: FixedValues;
  /** Extra words for the `help` command beyond the command names (exit-codes). */
  helpTopics: readonly string[];
}

export function describeProgram(program: Command, extras: ModelExtras): CompletedCommand {
  return describeCommand(program, extras);
}

function describeCommand(command: Command, extras: ModelExtras, parent?: Command): CompletedCommand {
  const help = command.createHelp();
  return {
    name: command.name(),
    description: firstLine(command.summary() || command.description()),
    options: help.visibleOptions(command).map((option) => describeOption(option, extras.fixedValues)),
    subcommands: help.visibleCommands(command).map((sub) => describeCommand(sub, extras, command)),
    argumentValues:
      parent && command.name() === 'help'
        ? helpTopics(parent, extras)
        : command.registeredArguments.flatMap((argument) => argument.argChoices ?? []),
  };
}

/**
 * `help` (commander's implicit one under `config` as well as ours) takes its siblings' names, and at the top the
 * topics.
 */
function helpTopics(parent: Command, extras: ModelExtras): string[] {
  const siblings = parent.commands.map((sibling) => sibling.name()).filter((name) => name !== 'help');
  return parent.parent ? siblings : [...siblings, ...extras.helpTopics];
}

function describeOption(option: Option, fixedValues: FixedValues): CompletedOption {
  const fixed = option.long ? fixedValues[option.long] : undefined;
  const values = option.argChoices ?? fixed?.values;
  const placeholder = /<([^>]+)>|\[([^\]]+)\]/.exec(option.flags);
  const valueName = placeholder?.[1] ?? placeholder?.[2];
  const path = valueName === 'file' ? 'file' : valueName === 'dir' ? 'directory' : undefined;
  return {
    short: option.short,
    long: option.long,
    description: firstLine(option.description),
    takesValue: option.required || option.optional,
    valueName,
    values,
    commaList: Boolean(fixed?.commaList),
    path,
    // Repeatable flags collect into an array that starts empty (see collect() in src/options/values.ts).
    repeatable: Array.isArray(option.defaultValue) || option.variadic,
  };
}

function firstLine(text: string): string {
  return (text.split('\n')[0] ?? '').trim();
}

/** Every command path below the root, parents first: [], ['companies'], ['config'], ['config', 'set'], ... */
export function commandPaths(root: CompletedCommand): Array<{ path: string[]; command: CompletedCommand }> {
  const paths: Array<{ path: string[]; command: CompletedCommand }> = [];
  const walk = (command: CompletedCommand, path: string[]) => {
    paths.push({ path, command });
    for (const sub of command.subcommands) walk(sub, [...path, sub.name]);
  };
  walk(root, []);
  return paths;
}

/** Both spellings of an option, short first. */
export function optionFlags(option: CompletedOption): string[] {
  return [option.short, option.long].filter((flag): flag is string => flag !== undefined);
}
