import type { Command } from 'commander';
import { declareCommand } from './command-tree.js';
import type { CommandRunner } from './options.js';
import { DOCTOR_FLAGS } from '../options/command-flags.js';
import { addFlags, type FlagValues } from '../options/flag.js';

export function registerDoctorCommand(program: Command, run: CommandRunner): void {
  declareCommand(
    program,
    'doctor',
    { summary: 'check the way to the service: address, proxy, CAs, DNS, TCP, TLS, the key and its plan' },
    (command) => defineDoctor(command, run),
  );
}

function defineDoctor(command: Command, run: CommandRunner): void {
  command.description(
    'The first thing to run against a real service. Says which base URL, proxy and CAs a run would use and where\n' +
      "each came from, times each step of a request (DNS, TCP, TLS, the HTTP round trip), shows the key's plan\n" +
      '(one companies call of one row, one contacts call of one domain: no paid unit is spent), ' +
      'which decisions of\n' +
      'docs/api-contract.md the answers bear out, and the tolerances the client uses. Exit 0 when the service is\n' +
      'usable from here; otherwise the exit code and message a command would have met (5 for the network).\n' +
      'It never calls the paid /verify endpoint unless --verify names one address to check it with.',
  );
  addFlags(command, DOCTOR_FLAGS)
    .addHelpText(
      'after',
      `
Examples:
  $ prospect doctor
  $ HTTPS_PROXY=http://proxy.corp:3128 NO_PROXY=.corp.example prospect doctor
  $ prospect doctor --sandbox
  $ prospect doctor --verify patricia.hughes@valleyharbor.com --yes`,
    )
    .action(async (flags: FlagValues<typeof DOCTOR_FLAGS>) =>
      run(async (ctx) => {
        const { runDoctor, doctorDeps } = await import('../core/doctor/job.js');
        try {
          return await runDoctor(ctx, flags, doctorDeps(ctx));
        } finally {
          const { abandonedLookups } = await import('../core/doctor/probes.js');
          if (abandonedLookups() > 0) exitOnceCodeIsSet();
        }
      }),
    );
}

/**
 * A DNS lookup doctor gave up on cannot be cancelled and would keep the process alive until the resolver
 * answers (8 s, a minute): once the launcher has set the exit code, leave without waiting for it.
 */
function exitOnceCodeIsSet(): void {
  const poll = setInterval(() => {
    if (process.exitCode === undefined) return;
    clearInterval(poll);
    process.exit();
  }, 20);
  poll.unref();
}
