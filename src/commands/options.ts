import type { Command } from 'commander';
import { collect, integerInRange, positiveInteger } from '../options/values.js';
import type { RunContext } from '../runtime/context.js';

/** Runs a command body with the shared context; returns the exit code. Provided by src/cli.ts. */
export type CommandRunner = (body: (ctx: RunContext) => Promise<number>) => Promise<void>;

/** Output flags shared by every data command. */
export function addOutputOptions(command: Command): Command {
  return command
    .option('-f, --format <format>', 'csv, json, ndjson, table or xlsx (default: table on a terminal, csv otherwise)')
    .option(
      '-o, --output <file>',
      'write to FILE atomically (a failed run leaves no partial file); - is stdout, a device or FIFO is written directly',
    )
    .option('--columns <list>', 'columns to keep, in order; source:Header renames one (docs/crm-import.md)')
    .option('--no-escape-formulas', "do not prefix cells that start with = + - @ with ' (spreadsheet formula guard)")
    .option(
      '--bom',
      'start a CSV with a UTF-8 byte-order mark, so Excel on Windows reads accents right (Procházka, not ProchÃ¡zka)',
    );
}

/**
 * --preset, for the commands that write contacts: CRM contact and lead importers are what presets are
 * for. The names are written out (src/io/presets.ts is not loaded at start-up; a test checks they match).
 */
export function addPresetOption(command: Command): Command {
  return command.option(
    '--preset <crm>',
    'headers a CRM importer maps by default: hubspot or salesforce; --columns adjusts them',
  );
}

/** The contact flags `contacts` and `pipeline` share, with one set of defaults and bounds. */
export function addContactOptions(command: Command): Command {
  return command
    .option('-s, --seniority <list>', 'only these seniorities: cxo, vp, director, manager, staff (comma-separated)')
    .option(
      '--limit <n>',
      'contacts a call asks for at most, 1 to 1000 (the most the service sends); nothing is cut at any value, a lower one only costs calls',
      integerInRange('--limit', 1, 1000),
      1000,
    )
    .option(
      '--per-company <n>',
      'keep the N most useful contacts of each company: most senior, then fresh, then most recently confirmed',
      positiveInteger('--per-company'),
    )
    .option('--max-age <age>', 'an address last seen longer ago is stale: 90d, 6m, 1y or a date', '90d')
    .option('--stale <policy>', 'what to do with stale addresses: keep, drop or verify', 'keep')
    .option(
      '--verify-budget <units>',
      'with --stale verify: at most this many paid verifications (oldest first)',
      integerInRange('--verify-budget', 0),
    )
    .option('-y, --yes', 'with --stale verify: spend without asking (a pipe or cron needs --yes or a budget)')
    .option('--concurrency <n>', 'service calls in flight at once, 1 to 32', integerInRange('--concurrency', 1, 32), 4)
    .option('--cache-ttl <age>', 'reuse verification results younger than this', '30d')
    .option('--no-cache', 'do not reuse or store verification results')
    .option(
      '--summary <file>',
      'write a JSON record of the run to FILE (the fields of FILE.meta.json: docs/run-record.md)',
    );
}

/**
 * Suppression lists (src/core/shared/suppression.ts), repeatable: what the command takes of them. A file is
 * anything the domain or address input reads: a CRM export with a Website or Email column, a list, JSON.
 */
export function addSuppressionOptions(command: Command, kinds: { domains: boolean; emails: boolean }): Command {
  if (kinds.domains)
    command.option(
      '--exclude-domains <file>',
      'leave out the companies in FILE (a CRM export with a Website column, a list, JSON; repeatable)',
      collect,
      [],
    );
  if (kinds.emails)
    command.option(
      '--exclude-emails <file>',
      'leave out the addresses in FILE, never verified or written (an Email column, a list, JSON; repeatable)',
      collect,
      [],
    );
  return command;
}

/** --keep-empty, for the commands that write contacts. */
export function addKeepEmptyOption(command: Command): Command {
  return command.option(
    '--keep-empty',
    'also write one row for each company without a named contact (contact columns empty, email_freshness none)',
  );
}

/** --summary FILE, for the commands that do not take the contact flags. */
export function addSummaryOption(command: Command): Command {
  return command.option(
    '--summary <file>',
    'write a JSON record of the run to FILE (the fields of FILE.meta.json: docs/run-record.md)',
  );
}

/** The company filters `companies` and `pipeline` share. */
export function addCompanyFilterOptions(command: Command): Command {
  const filters = command
    .option('-t, --technology <name>', 'a technology the company runs (repeatable: all must match)', collect, [])
    .option('-T, --not-technology <name>', 'a technology the company must not run (repeatable)', collect, [])
    .option(
      '--employee-range <ranges>',
      'employee range: 11-500 (covers 11-50, 51-200, 201-500) or 500+; a list or repeated: any of them',
      collect,
      [],
    )
    .option(
      '--country <name>',
      'country name or ISO code, e.g. "united states", US, UK, Deutschland (repeatable: any of them)',
      collect,
      [],
    );
  return addAllowEmptyOption(filters);
}

/** --allow-empty, for the commands that write rows: an empty result is exit 3 without it. */
export function addAllowEmptyOption(command: Command): Command {
  return command.option(
    '--allow-empty',
    'when nothing matches (no row to write), write an empty result and exit 0 instead of exit 3',
  );
}
