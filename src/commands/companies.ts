import type { Command } from 'commander';
import type { CompaniesFlags } from '../core/companies/job.js';
import { COMPANIES_FLAGS } from '../options/command-flags.js';
import { addFlags } from '../options/flag.js';
import { declareCommand } from './command-tree.js';
import type { CommandRunner } from './options.js';

export function registerCompaniesCommand(program: Command, run: CommandRunner): void {
  declareCommand(
    program,
    'companies',
    { summary: 'list companies that run a technology, with their whole stack' },
    (command) => defineCompanies(command, run),
  );
}

function defineCompanies(command: Command, run: CommandRunner): void {
  command.description(
    'List the companies (by domain) that currently run a technology, each with its whole detected stack. ' +
      'Repeat --technology / --not-technology: every one must match (the first is asked of the service, the rest ' +
      'are checked on each row), as are --industry and --max-rank. A terminal gets a table, a pipe gets CSV; ' +
      '-o picks the format from its extension ' +
      'and writes FILE.meta.json beside it with the provenance (source, scope, fill rates).',
  );
  addFlags(command, COMPANIES_FLAGS)
    .addHelpText(
      'after',
      `
Examples:
  $ prospect companies --technology Shopify -o shopify.csv
  $ prospect companies -t Shopify -T Klaviyo --country "united states" --employee-range 11-500 -o leads.csv
  $ prospect companies -t WordPress -t WooCommerce --max 50
  $ prospect companies -t Shopify --industry "apparel and fashion" --max-rank 100000 -o apparel.csv
  $ prospect companies -t jQuery --concurrency 8 -o jquery.csv
  $ prospect companies -t Shopify --exclude-domains customers.csv -o prospects.csv --summary run.json
  $ prospect --sandbox companies -t Shopify --format ndjson | prospect --sandbox contacts --seniority cxo,vp`,
    )
    .action(async (flags: CompaniesFlags) =>
      run(async (ctx) => {
        const [{ runCompanies }, { runtimeDeps }] = await Promise.all([
          import('../core/companies/job.js'),
          import('../runtime/job-deps.js'),
        ]);
        return runCompanies(ctx, flags, runtimeDeps(ctx));
      }),
    );
}
