/**
 * `prospect forget EMAIL… | --file FILE | --list`: a standing suppression. The addresses are checked
 * (exit 2 before anything is written), then each is kept as a keyed hash in the team's store when a
 * state URL is set, else in this machine's. Every later contacts, verify and pipeline run, on any
 * machine of the team, leaves them out before any call (src/core/shared/exclusion.ts).
 */
import { ExitCode, UsageError } from '../../exit-codes.js';
import { checkEmailSyntax, emailKey } from '../../io/emails.js';
import type { RunContext } from '../../runtime/context.js';
import { countOf } from '../../ui/format-count.js';
import { displaySafe } from '../../util/display-safe.js';
import { readAddressFiles } from '../shared/exclusion.js';
import { loadSuppressionCounts, suppressionTarget } from './suppression.js';

export interface ForgetFlags {
  args: string[];
  file?: string[];
  list?: boolean;
}

export async function runForget(ctx: RunContext, flags: ForgetFlags): Promise<number> {
  const files = flags.file ?? [];
  if (flags.list) {
    if (flags.args.length > 0 || files.length > 0)
      throw new UsageError('--list counts the suppressions: give it no address and no --file.');
    for (const { where, entries } of await loadSuppressionCounts(ctx))
      ctx.stdout.write(`${countOf(entries, 'address', 'addresses')} suppressed in ${displaySafe(where)}\n`);
    return ExitCode.ok;
  }
  const keys = await addressesToForget(flags.args, files);
  const target = await suppressionTarget(ctx);
  try {
    const added = await target.store.add(keys);
    const already = keys.length - added;
    ctx.reporter.notice(
      `forgot ${countOf(keys.length, 'address', 'addresses')} in ${target.where}` +
        `${already > 0 ? ` (${already} already there)` : ''}: kept out of every later run, before any call.`,
    );
  } finally {
    target.close();
  }
  return ExitCode.ok;
}

/** The addresses' keys, each once; any that is not an address is exit 2 before anything is written. */
async function addressesToForget(args: readonly string[], files: readonly string[]): Promise<string[]> {
  const keys = new Set<string>();
  for (const arg of args) {
    const checked = checkEmailSyntax(arg);
    if (!checked.ok)
      throw new UsageError(`"${displaySafe(arg)}" is not an address (${checked.reason}); nothing was forgotten.`);
    keys.add(emailKey(checked.email));
  }
  await readAddressFiles(files, '--file', (address) => keys.add(emailKey(address)));
  if (keys.size === 0)
    throw new UsageError('no address to forget.', 'Give addresses as arguments, or a CRM export with --file.');
  return [...keys];
}
