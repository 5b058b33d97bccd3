import type { Command } from 'commander';
import { STATE_LIST_FLAGS, STATE_RESET_FLAGS, STATE_SHOW_FLAGS } from '../options/command-flags.js';
import { addFlags, type FlagValues } from '../options/flag.js';
import { declareCommand } from './command-tree.js';
import type { CommandRunner } from './options.js';

export function registerStateCommand(program: Command, run: CommandRunner): void {
  declareCommand(
    program,
    'state',
    { summary: "list, show and reset pipeline jobs: a --state directory's, or the team store's (pg:NAME)" },
    (command) => defineState(command, run),
  );
}

const job = () => import('../core/pipeline/state/state-job.js');

function defineState(state: Command, run: CommandRunner): void {
  state.description(
    'The pipeline jobs a store keeps: a --state directory (docs/state-directory.md) or the team database\n' +
      '(pg:NAME, docs/team.md). list and show write data (a table on a terminal, CSV on a pipe); reset discards a\n' +
      "job's unfinished run so its next run starts fresh, refused (exit 6) while a run holds the job.",
  );
  state.addHelpText(
    'after',
    `
Examples:
  $ prospect pipeline -t Shopify --seniority cxo,vp --state weekly --only-new -o weekly.csv
  $ prospect state list --state weekly
  $ prospect state show weekly --format json
  $ prospect state reset weekly --forget-exports --yes`,
  );
  addFlags(
    state.command('list').description('each job: held or not, last run, unfinished run, exported leads'),
    STATE_LIST_FLAGS,
  )
    .addHelpText(
      'after',
      '\nExamples:\n  $ prospect state list --state weekly\n  $ prospect state list --state weekly --format json',
    )
    .action(async (flags: FlagValues<typeof STATE_LIST_FLAGS>) =>
      run(async (ctx) => (await job()).listJobs(ctx, flags)),
    );
  addFlags(
    state
      .command('show')
      .description("a job's detail: its unfinished run's progress and its last runs")
      .argument('<job>', 'a --state directory, or pg:NAME'),
    STATE_SHOW_FLAGS,
  )
    .addHelpText('after', '\nExamples:\n  $ prospect state show weekly\n  $ prospect state show weekly --format json')
    .action(async (name: string, flags: FlagValues<typeof STATE_SHOW_FLAGS>) =>
      run(async (ctx) => (await job()).showJob(ctx, name, flags)),
    );
  addFlags(
    state
      .command('reset')
      .description("discard a job's unfinished run; --forget-exports also its exported leads")
      .argument('<job>', 'a --state directory, or pg:NAME'),
    STATE_RESET_FLAGS,
  )
    .addHelpText(
      'after',
      '\nExamples:\n  $ prospect state reset weekly\n  $ prospect state reset weekly --forget-exports --yes',
    )
    .action(async (name: string, flags: FlagValues<typeof STATE_RESET_FLAGS>) =>
      run(async (ctx) => (await job()).resetJob(ctx, name, flags)),
    );
}
