import type { Command } from 'commander';
import type { VerifyFlags } from '../core/verification/job.js';
import { integerInRange } from '../options/values.js';
import { declareCommand } from './command-tree.js';
import { addOutputOptions, addSuppressionOptions, type CommandRunner } from './options.js';

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
        'On a terminal it asks first; in a pipe or cron it needs --verify-budget N, --yes or `prospect config set verify-budget N`.',
    )
    .argument('[addresses...]', 'email addresses')
    .option('--file <file>', 'read addresses from FILE ("-" for stdin)')
    .option('--email-column <name>', 'the CSV column that holds the address (default: business_email, then email)')
    .option(
      '--verify-budget <units>',
      'spend at most this many units (oldest addresses first); the rest are marked unchecked',
      integerInRange('--verify-budget', 0),
    )
    .option('--budget <units>', 'the same as --verify-budget (its older name)', integerInRange('--budget', 0))
    .option('--dry-run', 'print how many units the run would spend, and spend none')
    .option('-y, --yes', 'spend without asking (a pipe or cron needs --yes or a budget)')
    .option(
      '--confirm-over <units>',
      'on a terminal, ask only before spending more than this',
      integerInRange('--confirm-over', 0),
      0,
    )
    .option('--concurrency <n>', 'checks in flight at once, 1 to 32', integerInRange('--concurrency', 1, 32), 4)
    .option('--cache-ttl <age>', 'reuse results younger than this (30d, 6m, …)', '30d')
    .option('--no-cache', 'do not reuse or store results')
    .option('--strict', 'any malformed address is an error (exit 2) before any request')
    .option(
      '--summary <file>',
      'write a JSON record of the run to FILE (the fields of FILE.meta.json: docs/run-record.md)',
    );
  addSuppressionOptions(command, { domains: false, emails: true });
  addOutputOptions(command)
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
        const { runVerify } = await import('../core/verification/job.js');
        return runVerify(ctx, { ...flags, args: addresses });
      }),
    );
}
