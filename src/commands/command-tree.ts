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

const HELP_CONFIGURATION = { optionDescription: describeOption, visibleCommands };

function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap(allCommands)];
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let current: Command | null = command; current?.parent; current = current.parent) names.unshift(current.name());
  return names.join(' ');
}
