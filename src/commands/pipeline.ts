import type { Command } from 'commander';
import type { PipelineFlags } from '../core/pipeline/job.js';
import { PIPELINE_FLAGS } from '../options/command-flags.js';
import { addFlags } from '../options/flag.js';
import { declareCommand } from './command-tree.js';
import type { CommandRunner } from './options.js';

export function registerPipelineCommand(program: Command, run: CommandRunner): void {
  declareCommand(
    program,
    'pipeline',
    { summary: 'companies → contacts → freshness → verification, as one cron-safe, resumable export' },
    (command) => definePipeline(command, run),
  );
}

function definePipeline(command: Command, run: CommandRunner): void {
  command.description(
    "One command from a technology to a lead list: one joined row per contact (its columns, then the company's). " +
      'Contact calls start while company pages are still arriving. With --state DIR a run that dies resumes where ' +
      'it stopped (same command again: byte-identical output, no unit paid twice), --only-new writes only the leads ' +
      'no earlier run exported, and a second run on the same state exits 6 at once. --industry and --max-rank are ' +
      'checked on each company row before its contacts are asked for: no call, no unit for a company outside them.',
  );
  addFlags(command, PIPELINE_FLAGS)
    .addHelpText(
      'after',
      `
Examples:
  $ prospect pipeline -t Shopify -T Klaviyo --country "united states" --employee-range 11-500 \\
      --seniority cxo,vp --stale verify --verify-budget 500 --state ~/.prospect/shopify --only-new \\
      -o "leads-$(date +%F).csv" --summary run.json
  $ prospect --sandbox pipeline -t Shopify --seniority cxo --per-company 2 --format table
  $ prospect pipeline -t Shopify --industry "apparel and fashion" --max-rank 100000 --seniority cxo,vp \\
      -o apparel-leads.csv --summary run.json
  $ prospect pipeline -t Shopify --max 20 --exclude-domains customers.csv --exclude-emails do-not-contact.csv \\
      --keep-empty -o leads.csv --summary run.json
  # crontab: every Monday at 03:00 (cron's PATH: README, Scheduled exports); one file a run, never replaced
  0 3 * * 1  cd ~/leads && prospect pipeline -t Shopify --seniority cxo,vp --state state --only-new ` +
        `-o "weekly-$(date +\\%F).csv" --summary weekly.json`,
    )
    .action(async (flags: PipelineFlags) =>
      run(async (ctx) => {
        // A held --state is refused before the job's modules load (issue 43: exit 6 within a second).
        if (flags.state !== undefined && !flags.state.startsWith('pg:') && flags.dryRun !== true)
          await (await import('../core/state-store/lock.js')).refuseIfHeld(flags.state);
        const [{ runPipeline }, { runtimeDeps }] = await Promise.all([
          import('../core/pipeline/job.js'),
          import('../runtime/job-deps.js'),
        ]);
        return runPipeline(ctx, flags, runtimeDeps(ctx));
      }),
    );
}
