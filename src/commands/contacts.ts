import type { Command } from 'commander';
import type { ContactsFlags } from '../core/contacts/job.js';
import { CONTACTS_FLAGS } from '../options/command-flags.js';
import { addFlags } from '../options/flag.js';
import { declareCommand } from './command-tree.js';
import type { CommandRunner } from './options.js';

export function registerContactsCommand(program: Command, run: CommandRunner): void {
  declareCommand(
    program,
    'contacts',
    { summary: 'decision-makers of a list of domains, with the freshness of each address' },
    (command) => defineContacts(command, run),
  );
}

function defineContacts(command: Command, run: CommandRunner): void {
  command
    .description(
      'Named decision-makers for a list of domains: from arguments, --domains-file, or stdin (plain lines, a CSV ' +
        'with a domain column, or what `prospect companies` writes). At most 100 domains and 1,000 contacts go ' +
        'in one call; a call that comes back full keeps the seniorities it holds whole and asks again for the ' +
        'rest, until nothing is cut. Every row says how old its address is (--max-age).',
    )
    .argument('[domains...]', 'domains or URLs (https://www.acme.com/about becomes acme.com)');
  addFlags(command, CONTACTS_FLAGS)
    .addHelpText(
      'after',
      `
Examples:
  $ prospect contacts valleyharbor.com meadowfitness.com --seniority cxo,vp
  $ prospect companies -t Shopify --format ndjson | prospect contacts --seniority cxo,vp > contacts.csv
  $ prospect contacts --domains-file accounts.csv --domain-column website --per-company 3 -o contacts.csv
  $ prospect contacts --domains-file domains.txt --stale verify --verify-budget 200 --summary run.json
  $ prospect contacts valleyharbor.com meadowfitness.com --keep-empty --exclude-emails do-not-contact.csv`,
    )
    .action(async (domains: string[], flags: Omit<ContactsFlags, 'args'>) =>
      run(async (ctx) => {
        const [{ runContacts }, { runtimeDeps }] = await Promise.all([
          import('../core/contacts/job.js'),
          import('../runtime/job-deps.js'),
        ]);
        return runContacts(ctx, { ...flags, args: domains }, runtimeDeps(ctx));
      }),
    );
}
