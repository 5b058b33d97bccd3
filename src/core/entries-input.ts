import { UsageError } from '../exit-codes.js';
import { formatInvalidEntry, type InvalidEntry } from '../io/input/entries.js';
import { formatProblem, type EntryKind, type InputProblem } from '../io/input/model.js';
import { readInputText, type InputText } from '../io/input/source.js';
import type { RunContext } from '../runtime/context.js';
import { countOf } from '../ui/format-count.js';

/** Where a command's list of domains or addresses comes from. */
export interface EntriesInput {
  args: string[];
  file?: string;
}

/** Arguments, else the file, else stdin when it is piped; nothing at all is a usage error. */
export async function readEntriesInput(ctx: RunContext, input: EntriesInput, kind: EntryKind): Promise<InputText> {
  const text = await readInputText({ args: input.args, file: input.file, stdin: ctx.stdin });
  if (text === null) {
    const fileFlag = kind === 'domain' ? '--domains-file' : '--file';
    throw new UsageError(`no ${kind === 'domain' ? 'domains' : 'addresses'} given.`, `Give them as arguments, with ${fileFlag} FILE, or on stdin (a pipe).`);
  }
  return text;
}

/** Part of the input could not be read at all (broken JSON, a missing column): stop before any call. */
export function failOnInputProblems(problems: readonly InputProblem[], origin: string): void {
  if (problems.length === 0) return;
  const lines = problems.slice(0, 5).map(formatProblem);
  throw new UsageError(`cannot read ${origin}: ${lines.join('; ')}${problems.length > 5 ? ` (and ${problems.length - 5} more)` : ''}.`);
}

const SHOWN_INVALID = 20;

/**
 * Invalid entries are never sent. Skipping them changes what the output means, so it is a caveat:
 * one line with the count everywhere (a cron job must not drop part of its list without a word),
 * the entries themselves on a terminal or with --verbose. --strict makes any of them fatal before
 * a single request.
 */
export function reportInvalidEntries(ctx: RunContext, invalid: readonly InvalidEntry[], kind: EntryKind, strict: boolean): void {
  if (invalid.length === 0) return;
  const lines = invalid.slice(0, SHOWN_INVALID).map((entry) => formatInvalidEntry(entry, kind));
  if (invalid.length > SHOWN_INVALID) lines.push(`… and ${countOf(invalid.length - SHOWN_INVALID, 'more', 'more')}`);
  const count = kind === 'domain' ? countOf(invalid.length, 'invalid domain') : countOf(invalid.length, 'invalid email address', 'invalid email addresses');
  if (strict) throw new UsageError(`${count} in the input (--strict):\n  ${lines.join('\n  ')}`);
  ctx.reporter.caveat(`skipped ${count} (never sent)${ctx.reporter.chatty ? ':' : '; --verbose lists them.'}`);
  ctx.reporter.details(lines);
}
