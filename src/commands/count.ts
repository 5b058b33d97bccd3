import type { Command } from 'commander';
import type { CountFlags } from '../core/count/job.js';
import { COUNT_FLAGS } from '../options/command-flags.js';
import { addFlags } from '../options/flag.js';
import { declareCommand } from './command-tree.js';
import type { CommandRunner } from './options.js';

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
      'bar chart, a pipe gets CSV (segment, companies, contacts, share); -o chart.svg draws the chart as SVG.\n' +
      'With --industry or --max-rank (which the service cannot filter on) the set is walked and the counts are of\n' +
      'the filtered set.',
  );
  addFlags(command, COUNT_FLAGS)
    .addHelpText(
      'after',
      `
Examples:
  $ prospect count -t Shopify -T Klaviyo --country US --employee-range 11-500
  $ prospect count -t WordPress -t WooCommerce --by country
  $ prospect count -t Shopify --by technology --top 15 -o shopify-stack.svg
  $ prospect count -t Shopify --by employee_range --format json
  $ prospect count -t Shopify --industry "apparel and fashion" --max-rank 10000 --by country
  $ prospect count -t Shopify --country US --exclude-domains customers.csv`,
    )
    .action(async (flags: CountFlags) =>
      run(async (ctx) => {
        const [{ runCount }, { runtimeDeps }] = await Promise.all([
          import('../core/count/job.js'),
          import('../runtime/job-deps.js'),
        ]);
        return runCount(ctx, flags, runtimeDeps(ctx));
      }),
    );
}
