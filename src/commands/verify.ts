import type { Command } from 'commander';
import type { VerifyFlags } from '../core/jobs/verify.js';
import { integerInRange } from '../options/values.js';
import { addOutputOptions, type CommandRunner } from './options.js';

export function registerVerifyCommand(program: Command, run: CommandRunner): void {
  const command = program
    .command('verify')
    .summary('check email addresses with the service (one paid unit each, never twice)')
    .description(
      'Check email addresses with the service, one paid unit per address. Addresses come from arguments, --file, ' +
        'or stdin: plain lines, or a CSV whose --email-column (default business_email, then email) holds them. ' +
        'Malformed addresses are reported and never paid for; duplicates are paid once; results are cached.',
    )
    .argument('[addresses...]', 'email addresses')
    .option('--file <file>', 'read addresses from FILE ("-" for stdin)')
    .option('--email-column <name>', 'the CSV column that holds the address (default: business_email, then email)')
    .option('--budget <units>', 'spend at most this many units; the rest are marked unchecked', integerInRange('--budget', 0))
    .option('--dry-run', 'print how many units the run would spend, and spend none')
    .option('-y, --yes', 'do not ask before a large spend on a terminal')
    .option('--confirm-over <units>', 'on a terminal, ask before spending more than this', integerInRange('--confirm-over', 0), 100)
    .option('--concurrency <n>', 'checks in flight at once, 1 to 32', integerInRange('--concurrency', 1, 32), 4)
    .option('--cache-ttl <age>', 'reuse results younger than this (30d, 6m, …)', '30d')
    .option('--no-cache', 'do not reuse or store results')
    .option('--strict', 'any malformed address is an error (exit 2) before any request')
    .option('--summary <file>', 'write a JSON record of the run to FILE');
  addOutputOptions(command)
    .addHelpText(
      'after',
      `
Examples:
  $ prospect verify ceo@acme.com cfo@acme.com
  $ prospect verify --file contacts.csv --budget 100 -o verified.csv
  $ prospect verify --file contacts.csv --dry-run
  $ prospect contacts --domains-file accounts.txt | prospect verify --budget 50 --yes > checked.csv`,
    )
    .action(async (addresses: string[], flags: Omit<VerifyFlags, 'args'>) =>
      run(async (ctx) => {
        const { runVerify } = await import('../core/jobs/verify.js');
        return runVerify(ctx, { ...flags, args: addresses });
      }),
    );
}
