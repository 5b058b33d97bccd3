import type { Command } from 'commander';
import type { CountFlags } from '../core/count/job.js';
import { integerInRange } from '../options/values.js';
import { declareCommand } from './command-tree.js';
import { addCompanyFilterOptions, addOutputOptions, addSuppressionOptions, type CommandRunner } from './options.js';

export function registerCountCommand(program: Command, run: CommandRunner): void {
  declareCommand(
    program,
    'count',
    { summary: 'size a set before exporting it: companies and named contacts, or a breakdown as a chart' },
    (command) => defineCount(command, run),
  );
}

function defineCount(command: Command, run: CommandRunner): void {
  command.description(
    'Count the companies and the named contacts in exactly the set that `companies` would list, without listing it:\n' +
      'one call per service query (its count), on every plan (a Free key counts contacts it cannot list).\n' +
      '--by breaks the set down: country and employee_range are one query per segment; industry, technology\n' +
      '(what else the set runs) and category walk the set (its cost in pages is shown first). A terminal gets a\n' +
      'bar chart, a pipe gets CSV (segment, companies, contacts, share); -o chart.svg draws the chart as SVG.',
  );
  addCompanyFilterOptions(command)
    .option('--by <dimension>', 'break the set down by country, employee_range, industry, technology or category')
    .option(
      '--top <n>',
      'with --by: the N largest segments, the rest as one "other" row (0: all)',
      integerInRange('--top', 0),
      10,
    )
    .option('--concurrency <n>', 'service calls in flight at once, 1 to 32', integerInRange('--concurrency', 1, 32), 4);
  addSuppressionOptions(command, { domains: true, emails: false });
  addOutputOptions(command)
    .addHelpText(
      'after',
      `
Examples:
  $ prospect count -t Shopify -T Klaviyo --country US --employee-range 11-500
  $ prospect count -t WordPress -t WooCommerce --by country
  $ prospect count -t Shopify --by technology --top 15 -o shopify-stack.svg
  $ prospect count -t Shopify --by employee_range --format json
  $ prospect count -t Shopify --country US --exclude-domains customers.csv`,
    )
    .action(async (flags: CountFlags) =>
      run(async (ctx) => {
        const { runCount } = await import('../core/count/job.js');
        return runCount(ctx, flags);
      }),
    );
}
