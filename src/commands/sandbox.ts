/**
 * `prospect sandbox` as the command tree declares it at start: its name and description. Its flags,
 * help and action (sandbox-command.ts), and with them every module of src/sandbox, load only when it
 * runs or when a help or a completion script lists it (README "Start-up").
 */
import type { Command } from 'commander';
import { declareLazyCommand } from './command-tree.js';

export function registerSandboxCommand(program: Command): void {
  declareLazyCommand(
    program,
    'sandbox',
    {
      description:
        'run a local copy of the service over generated data (keys: sandbox-free, -starter, -growth, -scale)',
    },
    async () => (await import('./sandbox-command.js')).defineSandbox,
  );
}
