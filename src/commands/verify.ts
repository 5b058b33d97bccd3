import type { Command } from 'commander';
import type { VerifyFlags } from '../core/verification/job.js';
import { VERIFY_FLAGS } from '../options/command-flags.js';
import { addFlags } from '../options/flag.js';
import { declareCommand } from './command-tree.js';
import type { CommandRunner } from './options.js';

export function registerVerifyCommand(program: Command, run: CommandRunner): void {
  declareCommand(
    program,
    'verify',
    { summary: 'check email addresses with the service (one paid unit each, never twice)' },
    (command) => defineVerify(command, run),
  );
}

function defineVerify(command: Command, run: CommandRunner): void {
  command
    .description(
      'Check email addresses with the service, one paid unit per address. Addresses come from arguments, --file, ' +
        'or stdin: plain lines, or a CSV whose --email-column (default business_email, then email) holds them. ' +
        'Malformed addresses are reported and never paid for; duplicates are paid once; results are kept in a ledger ' +
        'shared by every command, and rows whose verification and verified_at columns are recent are not paid again. ' +
        'On a terminal it asks first; in a pipe or cron it needs --verify-budget N, --yes or ' +
        '`prospect config set verify-budget N`.',
    )
    .argument('[addresses...]', 'email addresses');
  addFlags(command, VERIFY_FLAGS)
    .addHelpText(
      'after',
      `
Examples:
  $ prospect verify patricia.hughes@valleyharbor.com betty.kelly@valleyharbor.com --yes
  $ prospect verify --file contacts.csv --verify-budget 100 -o verified.csv
  $ prospect verify --file contacts.csv --dry-run
  $ prospect verify --file contacts.csv --exclude-emails do-not-contact.csv --verify-budget 100 -o verified.csv
  $ prospect contacts --domains-file accounts.txt | prospect verify --verify-budget 50 > checked.csv`,
    )
    .action(async (addresses: string[], flags: Omit<VerifyFlags, 'args'>) =>
      run(async (ctx) => {
        const [{ runVerify }, { runtimeDeps }] = await Promise.all([
          import('../core/verification/job.js'),
          import('../runtime/job-deps.js'),
        ]);
        return runVerify(ctx, { ...flags, args: addresses }, runtimeDeps(ctx));
      }),
    );
}
