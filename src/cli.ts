import { Command, CommanderError } from 'commander';
import { registerCompaniesCommand } from './commands/companies.js';
import { registerContactsCommand } from './commands/contacts.js';
import { registerVerifyCommand } from './commands/verify.js';
import { registerPipelineCommand } from './commands/pipeline.js';
import { registerCountCommand } from './commands/count.js';
import { registerDoctorCommand } from './commands/doctor.js';
import { registerForgetCommand } from './commands/forget.js';
import { registerProvenanceCommand } from './commands/provenance.js';
import { registerStateCommand } from './commands/state.js';
import type { CommandRunner } from './commands/options.js';
import { GLOBAL_FLAGS } from './options/command-flags.js';
import { addFlags } from './options/flag.js';
import { registerSandboxCommand } from './commands/sandbox.js';
import { registerConfigCommand } from './commands/config.js';
import { registerCompletionCommand } from './commands/completion.js';
import { registerHelpCommand, rootHelpText } from './commands/help.js';
import { configureHelpAndErrors, defineCommand, loadDefinitions } from './commands/command-tree.js';
import { CancelledError, ExitCode, exitCodeOf, knownFailure } from './exit-codes.js';
import {
  createContext,
  exitQuietlyOnBrokenPipe,
  installSignalHandlers,
  type GlobalOptions,
  type RunContext,
} from './runtime/context.js';
import { keyHint } from './runtime/connection.js';
import { packageVersion } from './package.js';
import { displaySafe } from './util/display-safe.js';

/** Runs the CLI and resolves to the exit code; never throws, never calls process.exit on the normal path. */
export async function main(argv: string[]): Promise<number> {
  const startedAt = Date.now();
  exitQuietlyOnBrokenPipe();
  const controller = new AbortController();
  const removeSignalHandlers = installSignalHandlers(controller);
  let exitCode: number = ExitCode.ok;
  const program = buildProgram(async (body) => {
    const cleanups: Array<() => Promise<void> | void> = [];
    const ctx = createContext(program.opts<GlobalOptions>(), controller.signal, cleanups);
    try {
      exitCode = await body(ctx);
    } catch (error) {
      exitCode = reportFailure(error, ctx, controller.signal);
      await recordFailure(argv, { startedAt, exitCode, error, ctx });
    } finally {
      for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => {});
      reportIncompleteOutput(ctx);
      // A failed or stopped run's last word is what it spent, and whether a re-run pays for it again.
      const spent = exitCode === ExitCode.ok ? undefined : ctx.spentSoFar?.();
      if (spent !== undefined) ctx.reporter.notice(spent);
    }
  });
  try {
    // A bare `prospect` asks what it can do: the help, on stdout, exit 0 (as gh and git do).
    await loadDefinitions(program, argv.slice(2));
    if (argv.length <= 2) program.outputHelp();
    else await program.parseAsync(argv);
  } catch (error) {
    exitCode = error instanceof CommanderError ? commanderExitCode(error) : ExitCode.internal;
    if (exitCode !== ExitCode.ok) await recordFailure(argv, { startedAt, exitCode, error: commanderMessage(error) });
  } finally {
    removeSignalHandlers();
  }
  return exitCode;
}

function buildProgram(run: CommandRunner): Command {
  const program = new Command('prospect')
    .description(
      'Build prospect lists from the company and contact data service: the companies that run a technology, ' +
        'their decision-makers, and fresh, verified email addresses, as a table on a terminal or CSV, JSON or ' +
        'NDJSON for everything else.',
    )
    .version(packageVersion(), '-V, --version');
  addFlags(program, GLOBAL_FLAGS).showSuggestionAfterError(true).exitOverride().addHelpText('after', rootHelpText());
  program.configureOutput({ writeErr: (text) => process.stderr.write(text) });
  registerCompaniesCommand(program, run);
  registerContactsCommand(program, run);
  registerVerifyCommand(program, run);
  registerPipelineCommand(program, run);
  registerCountCommand(program, run);
  registerDoctorCommand(program, run);
  registerForgetCommand(program, run);
  registerProvenanceCommand(program, run);
  registerStateCommand(program, run);
  registerSandboxCommand(program);
  registerConfigCommand(program, run);
  registerCompletionCommand(program, run);
  registerHelpCommand(program);
  configureHelpAndErrors(program);
  // The commands are declared above, and only the one that runs is defined (src/commands/command-tree.ts).
  program.hook('preSubcommand', (_program, subcommand) => void defineCommand(subcommand));
  // Config values (max-age, concurrency, format) as defaults for the flags the user did not give.
  program.hook('preAction', async (_program, actionCommand) =>
    (await import('./config/defaults.js')).applyConfigFileDefaults(actionCommand, process.env),
  );
  return program;
}

const asksForSummary = (argv: string[]) => argv.some((word) => word === '--summary' || word.startsWith('--summary='));

/**
 * Every early exit rewrites --summary FILE, so a monitor never reads last week's success (src/core/shared/runner.ts).
 */
async function recordFailure(
  argv: string[],
  run: { startedAt: number; exitCode: number; error: unknown; ctx?: RunContext },
): Promise<void> {
  if (!asksForSummary(argv)) return;
  const { writeEarlySummary } = await import('./core/shared/runner.js');
  await writeEarlySummary(argv.slice(2), { ...run, stdout: process.stdout });
}

/**
 * The last line of a run that failed after its rows started going to stdout (a file or a pipe) or a
 * device: whoever reads that output must know it is cut short, and by how much.
 */
function reportIncompleteOutput(ctx: RunContext): void {
  const left = ctx.incompleteOutput;
  if (left === undefined) return;
  const rows = `${left.rows.toLocaleString('en-US')} ${left.noun}`;
  const fix = left.where === 'stdout' ? '; -o FILE writes a file whole or not at all' : '';
  ctx.reporter.notice(`the output on ${left.where} is incomplete: ${rows} written before the run stopped${fix}.`);
}

/** What commander said, as prospect says it: "unknown option '--formt'", without its "error: ". */
function commanderMessage(error: unknown): string {
  return error instanceof Error ? error.message.replace(/^error: /, '').split('\n')[0]! : String(error);
}

/** Commander's own errors: help and version are success, everything else is a usage error. */
function commanderExitCode(error: CommanderError): number {
  if (
    error.code === 'commander.helpDisplayed' ||
    error.code === 'commander.version' ||
    error.code === 'commander.help'
  ) {
    return ExitCode.ok;
  }
  return ExitCode.usage;
}

function reportFailure(error: unknown, ctx: RunContext, signal: AbortSignal): number {
  const { reporter } = ctx;
  const leftRows = ctx.incompleteOutput !== undefined;
  const exitCode = exitCodeOf(error, signal);
  // A question answered with Ctrl-C says what it cost (nothing); any other interrupted run says what was kept.
  if (signal.aborted && !(error instanceof CancelledError)) {
    // Rows already on stdout stay there: the line after this one says so (reportIncompleteOutput).
    reporter.error(`interrupted by ${String(signal.reason)}${leftRows ? '.' : '; nothing was left half-written.'}`);
    return exitCode;
  }
  // A full disk, a refused key, a service that would not answer: a message for the person, not a bug report.
  const known = knownFailure(error);
  if (known) reporter.error(known.message, keyHint(known.hint, ctx.keySource));
  else {
    const message = error instanceof Error ? error.message : String(error);
    reporter.error(
      `internal error: ${message}`,
      reporter.debugging ? undefined : 'This is a bug in prospect; rerun with --debug for details and report it.',
    );
  }
  if (reporter.debugging && error instanceof Error && error.stack)
    process.stderr.write(`${displaySafe(error.stack)}\n`);
  return exitCode;
}
