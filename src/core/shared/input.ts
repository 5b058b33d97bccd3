import { UsageError } from '../../exit-codes.js';
import {
  domainEntries,
  emailEntries,
  entryPlace,
  type EntryPlace,
  formatInvalidEntry,
  streamEntries,
  streamEntryRows,
  type EntryCollector,
  type InvalidEntry,
} from '../../io/input/entries.js';
import { formatProblem, type EntryKind, type InputProblem } from '../../io/input/model.js';
import { openInputStream, spoolToFile, type InputStream } from '../../io/input/source.js';
import type { RunContext } from '../../runtime/context.js';
import { countOf } from '../../ui/format-count.js';

/** Where a command's list of domains or addresses comes from. */
export interface EntriesInput {
  args: string[];
  file?: string;
}

function fileFlagOf(kind: EntryKind): string {
  return kind === 'domain' ? '--domains-file' : '--file';
}

function nothingGiven(kind: EntryKind): UsageError {
  return new UsageError(
    `no ${kind === 'domain' ? 'domains' : 'addresses'} given.`,
    `Give them as arguments, with ${fileFlagOf(kind)} FILE, or on stdin (a pipe).`,
  );
}

/** The input the run was given (arguments, --file or --domains-file, stdin), or exit 2 naming what to give. */
function openGivenInput(ctx: RunContext, input: EntriesInput, kind: EntryKind): InputStream {
  refuseFileNames(input.args, kind);
  const source = openInputStream({ args: input.args, file: input.file, stdin: ctx.stdin });
  if (source === null) throw nothingGiven(kind);
  return source;
}

/** The extensions of the files prospect reads: no top-level domain is one of them. */
const INPUT_FILE_NAME = /\.(?:csv|tsv|txt|json|ndjson|jsonl|xlsx|xls)$/i;

/**
 * `prospect contacts accounts.csv` means the file. Sent as a domain it came back as "no named contact
 * for the 1 domain", after a call; it is refused before any, naming the flag that reads it.
 */
function refuseFileNames(args: readonly string[], kind: EntryKind): void {
  const name = args.find((arg) => !arg.includes('@') && INPUT_FILE_NAME.test(arg.trim()));
  if (name === undefined) return;
  const what = kind === 'domain' ? 'a domain' : 'an email address';
  throw new UsageError(
    `argument ${JSON.stringify(name)} is a file name, not ${what}.`,
    `Read the file with ${fileFlagOf(kind)} ${name}.`,
  );
}

export interface StreamedEntries {
  origin: string;
  /**
   * The accepted entries (EntryCollector.accept: valid, normalised, each once), in input order,
   * as the input arrives. Null when the input ended without any.
   */
  entries: AsyncIterable<string> | null;
  /** The input's counts so far: final once `ended`. */
  collector: EntryCollector;
  readonly ended: boolean;
  /**
   * Read once as it comes (standard input, a FIFO): it may never end (`yes | prospect contacts`), so a
   * run that has what it wants stops reading it rather than look for more.
   */
  stream: boolean;
  /**
   * With `keepRecords`: each accepted entry's whole row, from when it is handed out until the caller
   * takes it (takeRecord), so a stream holds only the rows in flight. The first one stays for `header`.
   */
  records?: EntryRecords;
}

/** The rows behind the entries handed out (contacts --keep-columns). */
class EntryRecords {
  private readonly byEntry = new Map<string, Record<string, string>>();
  /** The columns of the first accepted row: what the input has, before any call. */
  header: string[] = [];

  put(entry: string, record: Record<string, string>): void {
    if (this.header.length === 0) this.header = Object.keys(record);
    this.byEntry.set(entry, record);
  }

  take(entry: string): Record<string, string> | undefined {
    const record = this.byEntry.get(entry);
    this.byEntry.delete(entry);
    return record;
  }
}

/**
 * The command's entries as they arrive, so the first calls start while a producer still writes.
 * Returns once the first accepted entry has arrived (or the input has ended), so an input without
 * any is refused before an output is opened. When the input ends, the invalid entries are
 * reported, and a part that could not be read at all (broken JSON, a missing column) fails the
 * run; no entry after such a part is handed out. --strict reads the whole input first (standard
 * input through a temporary file, never into memory) and refuses it before any call.
 */
export async function streamEntriesInput(
  ctx: RunContext,
  input: EntriesInput & { strict: boolean; column: string | undefined; keepRecords?: boolean },
  kind: EntryKind,
): Promise<StreamedEntries> {
  let source = openGivenInput(ctx, input, kind);
  // A run that fails mid-stream must not then wait for its producer to close the pipe.
  if (!source.reopenable) ctx.onCleanup(() => void ctx.stdin.destroy());
  const columnFlag = kind === 'domain' ? '--domain-column' : '--email-column';
  const options = { kind, column: input.column, format: source.format, columnFlag, origin: source.origin };
  if (input.strict) {
    source = await reopenable(ctx, source);
    const check = collectorFor(kind);
    for await (const entry of streamEntries(source.open(), options, check)) void entry;
    reportInputEnd(ctx, check, kind, source.origin, true);
  }
  const collector = collectorFor(kind);
  const origin = source.origin;
  let ended = false;
  const chunks = source.open();
  const records = input.keepRecords ? new EntryRecords() : undefined;
  const entriesOf = records
    ? async function* (): AsyncGenerator<string> {
        for await (const { entry, record } of streamEntryRows(chunks, options, collector)) {
          records.put(entry, record);
          yield entry;
        }
      }
    : () => streamEntries(chunks, options, collector);
  async function* accepted(): AsyncGenerator<string> {
    for await (const entry of entriesOf()) {
      // Once part of the input could not be read, the run fails at its end: nothing more is sent.
      if (collector.problemCount === 0) yield entry;
    }
    ended = true;
    reportInputEnd(ctx, collector, kind, origin, input.strict);
  }
  const entries = accepted();
  const first = await entries.next();
  return {
    origin,
    entries: first.done ? null : replayFirst(first.value, entries),
    collector,
    get ended() {
      return ended;
    },
    stream: !source.reopenable,
    records,
  };
}

/**
 * The command's input, readable twice (`prospect verify` plans the whole input, then works through
 * it): standard input is copied to a temporary file first, never held in memory.
 */
export async function openRereadableInput(ctx: RunContext, input: EntriesInput, kind: EntryKind): Promise<InputStream> {
  return reopenable(ctx, openGivenInput(ctx, input, kind));
}

async function reopenable(ctx: RunContext, source: InputStream): Promise<InputStream> {
  return source.reopenable ? source : spoolToFile(source, (task) => ctx.onCleanup(task));
}

function collectorFor(kind: EntryKind): EntryCollector {
  const limits = { kept: SHOWN_INVALID };
  return kind === 'domain' ? domainEntries(limits) : emailEntries(limits);
}

function reportInputEnd(
  ctx: RunContext,
  collector: EntryCollector,
  kind: EntryKind,
  origin: string,
  strict: boolean,
): void {
  failOnInputProblems(collector.problems, origin, collector.problemCount);
  reportInvalidEntries(ctx, collector.invalid, kind, strict, collector.invalidCount, entryPlace(origin));
}

async function* replayFirst<T>(first: T, rest: AsyncIterator<T>): AsyncGenerator<T> {
  yield first;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

/** Part of the input could not be read at all (broken JSON, a missing column): stop before any call. */
export function failOnInputProblems(problems: readonly InputProblem[], origin: string, count = problems.length): void {
  if (count === 0) return;
  const lines = problems.slice(0, 5).map(formatProblem);
  throw new UsageError(`cannot read ${origin}: ${lines.join('; ')}${count > 5 ? ` (and ${count - 5} more)` : ''}.`);
}

/** Invalid entries listed in messages; beyond, their count. */
export const SHOWN_INVALID = 20;

/**
 * Invalid entries are never sent. Skipping them changes what the output means, so it is a caveat:
 * one line with the count everywhere (a cron job must not drop part of its list without a word),
 * the entries themselves on a terminal or with --verbose. --strict makes any of them fatal before
 * a single request. `invalid` is the first of them (a stream keeps no more), `total` how many.
 */
export function reportInvalidEntries(
  ctx: RunContext,
  invalid: readonly InvalidEntry[],
  kind: EntryKind,
  strict: boolean,
  total = invalid.length,
  place: EntryPlace = 'line',
): void {
  if (total === 0) return;
  const lines = invalid.slice(0, SHOWN_INVALID).map((entry) => formatInvalidEntry(entry, kind, place));
  if (total > SHOWN_INVALID) lines.push(`… and ${countOf(total - SHOWN_INVALID, 'more', 'more')}`);
  const count =
    kind === 'domain'
      ? countOf(total, 'invalid domain')
      : countOf(total, 'invalid email address', 'invalid email addresses');
  if (strict) throw new UsageError(`${count} in the input (--strict):\n  ${lines.join('\n  ')}`);
  ctx.reporter.caveat(`skipped ${count} (never sent)${ctx.reporter.chatty ? ':' : '; --verbose lists them.'}`);
  ctx.reporter.details(lines);
}
