import type { Command } from 'commander';
import type { ForgetFlags } from '../core/suppression/job.js';
import { declareCommand } from './command-tree.js';
import type { CommandRunner } from './options.js';

export function registerForgetCommand(program: Command, run: CommandRunner): void {
  declareCommand(
    program,
    'forget',
    { summary: 'keep addresses out of every later run, on every machine of the team (a removal request)' },
    (command) => defineForget(command, run),
  );
}

function defineForget(command: Command, run: CommandRunner): void {
  command
    .description(
      'A standing suppression: the addresses never reach an output, a paid check or a later run of contacts, ' +
        'verify or pipeline, which leave them out before any call and count them as suppressed. Kept in the ' +
        "team's database when a state URL is set (every machine with the team key honours it), else in this " +
        "machine's cache directory; either way as keyed hashes, never the addresses.",
    )
    .argument('[addresses...]', 'email addresses')
    .option('--file <file>', 'also the addresses of FILE, read as --exclude-emails reads it (repeatable)', collect)
    .option('--list', 'count the suppressed addresses of each store in force (never shows them)')
    .addHelpText(
      'after',
      `
Examples:
  $ prospect forget jane.doe@example.com
  $ prospect forget --file do-not-contact.csv
  $ prospect forget --list`,
    )
    .action(async (addresses: string[], flags: Omit<ForgetFlags, 'args'>) =>
      run(async (ctx) => {
        const { runForget } = await import('../core/suppression/job.js');
        return runForget(ctx, { ...flags, args: addresses });
      }),
    );
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
