/**
 * How every command of the program is made.
 *
 * A subcommand is declared at start with what the top-level help lists for it (its name and summary)
 * and defined, with its description, arguments, options, help text and action, only when something
 * needs it: when it runs, or when a help text or a completion script lists it. Commander needs every
 * command's name to dispatch, but building all their options took a sixth of `prospect --version`.
 *
 * Every command, declared or defined, gets one look for the help and one voice for the parser's errors
 * (configureHelpAndErrors).
 */
import { Help, type Command, type Option } from 'commander';
import { terminalSize } from '../ui/terminal-size.js';
import { wrapHelpText, wrapWords } from '../ui/wrap.js';

type Definition = (command: Command) => void;

const definitions = new WeakMap<Command, Definition>();

/** What the top-level help lists for a command: its summary, or its description when it has no summary. */
export type Listing = { summary: string } | { description: string };

/** Adds `name` under `parent`; `define` adds the rest when it is first needed (defineCommand). */
export function declareCommand(parent: Command, name: string, listing: Listing, define: Definition): void {
  const command = parent.command(name);
  if ('summary' in listing) command.summary(listing.summary);
  else command.description(listing.description);
  definitions.set(command, define);
}

/** A definition that lives in a module of its own, loaded when the command is first needed. */
type LoadDefinition = () => Promise<Definition>;

const loaders = new WeakMap<Command, LoadDefinition>();

/**
 * As declareCommand, but the definition is in a module loaded only when needed (loadDefinitions): the
 * sandbox's, so that nothing of src/sandbox loads on a start that does not use it.
 */
export function declareLazyCommand(parent: Command, name: string, listing: Listing, load: LoadDefinition): void {
  declareCommand(parent, name, listing, () => {
    throw new Error(`prospect ${name} was used before its definition was loaded`);
  });
  loaders.set(parent.commands.at(-1)!, load);
}

/** Commands that list every other one, so every definition must be loaded before they run. */
const LISTS_EVERY_COMMAND = new Set(['help', 'completion']);

/**
 * Before parsing `words` (argv without node and the script): loads the lazily declared definitions the
 * run may need: the command `words` names first, if it is lazy; every one when they name no command
 * but `--version`, or name a command that lists them all.
 */
export async function loadDefinitions(program: Command, words: readonly string[]): Promise<void> {
  const names = new Map(program.commands.map((command) => [command.name(), command]));
  const named = names.get(words.find((word) => names.has(word)) ?? '');
  // With no command named, commander may list them all (the help, the closest to a mistyped one).
  const asksVersion = words.some((word) => word === '--version' || word === '-V');
  const every = named === undefined ? !asksVersion : LISTS_EVERY_COMMAND.has(named.name());
  for (const command of every ? program.commands : named === undefined ? [] : [named]) {
    const load = loaders.get(command);
    if (load === undefined) continue;
    loaders.delete(command);
    definitions.set(command, await load());
  }
}

/** The command, defined if it was only declared; what its definition adds gets the same look and voice. */
export function defineCommand(command: Command): Command {
  const define = definitions.get(command);
  if (define !== undefined) {
    definitions.delete(command);
    define(command);
    configureHelpAndErrors(command);
  }
  return command;
}

/**
 * One look for the help and one voice for the parser's errors, on `command` and every command under
 * it: descriptions wrapped once to the terminal (80 columns when it reports none), no "(default: [])",
 * subcommands defined before a help lists them, and commander's `error: …` said as prospect says its
 * own errors: `prospect: <what happened>`, then what to do.
 */
export function configureHelpAndErrors(command: Command): void {
  for (const each of allCommands(command)) {
    each.configureHelp(HELP_CONFIGURATION);
    each.showHelpAfterError(false);
    each.configureOutput({
      getOutHelpWidth: () => helpWidth(process.stdout) ?? 80,
      // On a terminal, what commander prints as written (the examples) is fitted too.
      writeOut: (text) => {
        const width = helpWidth(process.stdout);
        process.stdout.write(width === undefined ? text : wrapHelpText(text, width));
      },
      getErrHelpWidth: () => helpWidth(process.stderr) ?? 80,
      outputError: (text, write) => write(parserErrorText(text, commandPath(each))),
    });
  }
}

/**
 * `error: unknown option '--formt'\n(Did you mean --format?)`
 * → `prospect: unknown option '--formt'\nDid you mean --format?`
 */
function parserErrorText(text: string, path: string): string {
  const [first = '', ...rest] = text.trimEnd().split('\n');
  // "… is invalid. Allowed choices are …": commander puts what to do on the same line.
  const [, invalid, remedy] = /^(.*? is invalid[^.]*\.) (.+)$/.exec(first) ?? [];
  // A command's own error may already name prospect ("prospect sandbox: …"): said once.
  const happened = (invalid ?? first).replace(/^error: /, '').replace(/^prospect( [a-z-]+)*: /, '');
  if (remedy !== undefined) rest.unshift(remedy);
  const todo = rest.map((line) => line.trim().replace(/^\((.*)\)$/, '$1')).filter((line) => line.length > 0);
  if (todo.length === 0) todo.push(`Run 'prospect ${path ? `${path} ` : ''}--help' for usage.`);
  return `prospect: ${happened}\n${todo.join('\n')}\n`;
}

/** The width help is wrapped to on `stream`: the terminal's, or undefined off a terminal. */
export function helpWidth(stream: NodeJS.WriteStream): number | undefined {
  return stream.isTTY ? terminalSize(stream).columns : undefined;
}

function describeOption(this: Help, option: Option): string {
  // A repeatable flag starts from an empty list: "(default: [])" tells a person nothing.
  const emptyList = Array.isArray(option.defaultValue) && option.defaultValue.length === 0;
  const shown = emptyList ? Object.assign(Object.create(option) as Option, { defaultValue: undefined }) : option;
  return Help.prototype.optionDescription.call(this, shown);
}

/** A help lists each subcommand's arguments and whether it has options: they are defined first. */
function visibleCommands(this: Help, command: Command): Command[] {
  for (const subcommand of command.commands) defineCommand(subcommand);
  return Help.prototype.visibleCommands.call(this, command);
}

/** Below this many columns beside the terms, a description goes under its term instead of in a sliver beside it. */
const NARROW_DESCRIPTION = 28;

/**
 * An option or command and its description: commander's layout, but where the column left for
 * descriptions is narrow, the description goes on the lines under its term, wrapped at spaces
 * (commander stops wrapping below 40 columns, and the terminal then breaks words).
 */
function formatItem(this: Help, term: string, termWidth: number, description: string, helper: Help): string {
  const width = this.helpWidth ?? 80;
  if (!description || width - termWidth - 4 >= NARROW_DESCRIPTION)
    return Help.prototype.formatItem.call(this, term, termWidth, description, helper);
  const indent = '      ';
  return `  ${term}\n${indent}${wrapWords(description, width - indent.length).replaceAll('\n', `\n${indent}`)}`;
}

/**
 * Wraps at spaces as commander does, after joining the lines of a paragraph written with hard line
 * breaks in the source: they went ragged at any width but the one they were written for. A line that
 * starts with a space (an example) keeps its break.
 */
function boxWrap(this: Help, text: string, width: number): string {
  return Help.prototype.boxWrap.call(this, text.replace(/([^\n])\n(?=[^\s])/g, '$1 '), width);
}

const HELP_CONFIGURATION = {
  optionDescription: describeOption,
  visibleCommands,
  formatItem,
  boxWrap,
  minWidthToWrap: 1,
};

function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap(allCommands)];
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let current: Command | null = command; current?.parent; current = current.parent) names.unshift(current.name());
  return names.join(' ');
}
