import { Argument, type Command } from 'commander';
import { ExitCode } from '../exit-codes.js';
import { declareCommand } from './command-tree.js';
import type { CommandRunner } from './options.js';

const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof COMPLETION_SHELLS)[number];

export function registerCompletionCommand(program: Command, run: CommandRunner): void {
  declareCommand(
    program,
    'completion',
    { summary: 'print a shell completion script for commands, flags and their values' },
    (command) => defineCompletion(command, run),
  );
}

function defineCompletion(command: Command, run: CommandRunner): void {
  command
    .description(
      'Print a completion script for bash, zsh or fish on stdout: commands, flags, and the fixed values of ' +
        '--seniority, --format, --stale, --sandbox-plan and the config keys. It is built from this version ' +
        'of prospect: regenerate it after an upgrade.',
    )
    .addArgument(new Argument('<shell>', 'the shell to complete for').choices(COMPLETION_SHELLS))
    .addHelpText(
      'after',
      `
Examples:
  $ source <(prospect completion bash)                                   # this shell only
  $ prospect completion bash > ~/.local/share/bash-completion/completions/prospect
  $ prospect completion zsh > "\${fpath[1]}/_prospect"
  $ prospect completion fish > ~/.config/fish/completions/prospect.fish`,
    )
    .action((shell: Shell, _flags: unknown, command: Command) =>
      run(async (ctx) => {
        ctx.stdout.write(await completionScript(rootOf(command), shell));
        return ExitCode.ok;
      }),
    );
}

async function completionScript(program: Command, shell: Shell): Promise<string> {
  const [
    { describeProgram },
    { SENIORITIES },
    { OUTPUT_FORMATS },
    { STALE_POLICIES },
    { FAULT_KIND_NAMES },
    { PRESET_NAMES },
  ] = await Promise.all([
    import('../completion/model.js'),
    import('../api/index.js'),
    import('../io/writers.js'),
    import('../core/contacts/options.js'),
    import('./sandbox-flags.js'),
    import('../io/presets.js'),
  ]);
  const model = describeProgram(program, {
    // Checked by the commands themselves rather than by commander's .choices(), so named here.
    fixedValues: {
      '--seniority': { values: SENIORITIES, commaList: true },
      '--format': { values: OUTPUT_FORMATS },
      '--preset': { values: PRESET_NAMES },
      '--stale': { values: STALE_POLICIES },
      '--faults': { values: ['all', ...FAULT_KIND_NAMES], commaList: true },
    },
    helpTopics: ['exit-codes'],
  });
  const name = program.name();
  switch (shell) {
    case 'bash':
      return (await import('../completion/bash.js')).bashScript(model, name);
    case 'zsh':
      return (await import('../completion/zsh.js')).zshScript(model, name);
    case 'fish':
      return (await import('../completion/fish.js')).fishScript(model, name);
  }
}

function rootOf(command: Command): Command {
  let root = command;
  while (root.parent) root = root.parent;
  return root;
}
