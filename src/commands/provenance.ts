import type { Command } from 'commander';
import type { ProvenanceFlags } from '../core/provenance/job.js';
import { declareCommand } from './command-tree.js';
import type { CommandRunner } from './options.js';

export function registerProvenanceCommand(program: Command, run: CommandRunner): void {
  declareCommand(
    program,
    'provenance',
    { summary: 'say which runs exported an address, when, to which file, from which dataset (GDPR Art. 14/15)' },
    (command) => defineProvenance(command, run),
  );
}

function defineProvenance(command: Command, run: CommandRunner): void {
  command
    .description(
      'Answers a data-subject request from the exports ledger: whether the address was exported, by which ' +
        'pipeline runs (date, job, host, output file), from which licensed dataset, and when the address had ' +
        'last been confirmed then; "never exported" otherwise. Reads --state DIR, or the team store (every job, ' +
        'or --state pg:NAME) when a state URL is set. Still answers after `prospect forget`.',
    )
    .argument('<address>', 'the email address asked about')
    .option('--state <dir>', 'the pipeline state directory (or pg:NAME) whose ledger to read')
    .addHelpText(
      'after',
      `
Examples:
  $ prospect pipeline -t Shopify --country "united states" --max 20 --seniority cxo --state weekly -o leads.csv
  $ prospect provenance patricia.hughes@valleyharbor.com --state weekly`,
    )
    .action(async (address: string, flags: Omit<ProvenanceFlags, 'args'>) =>
      run(async (ctx) => {
        const { runProvenance } = await import('../core/provenance/job.js');
        return runProvenance(ctx, { ...flags, args: [address] });
      }),
    );
}
