import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { access, constants, stat } from 'node:fs/promises';
import { dirname, extname } from 'node:path';
import { isatty } from 'node:tty';
import type { Writable } from 'node:stream';
import { CliError, ExitCode, UsageError } from '../exit-codes.js';
import { assertReplaceable, dropSidecar, openAtomicFile, writeFileAtomic, type AtomicFile } from './atomic-file.js';
import { descriptorIsOpen, outputTarget } from './output-target.js';
import { afterPendingWrites } from '../util/streams.js';
import { streamSink, type TextSink } from './sink.js';
import { OUTPUT_FORMATS, type OutputFormat } from './writers.js';

const FORMAT_BY_EXTENSION: Record<string, OutputFormat> = {
  '.csv': 'csv',
  '.json': 'json',
  '.ndjson': 'ndjson',
  '.jsonl': 'ndjson',
  '.xlsx': 'xlsx',
};

/** --format wins; then the extension of -o; then a table for a terminal and CSV for a pipe. */
export function resolveFormat(options: {
  format?: string;
  outputPath?: string;
  stdoutIsTTY: boolean;
  bom?: boolean;
}): OutputFormat {
  const format = chosenFormat(options);
  if (options.bom === true && format !== 'csv')
    throw new UsageError(
      `--bom is for CSV, and this run writes ${format}.`,
      'Leave --bom out, or write CSV (-o FILE.csv or --format csv).',
    );
  return format;
}

function chosenFormat(options: { format?: string; outputPath?: string; stdoutIsTTY: boolean }): OutputFormat {
  if (options.format !== undefined) {
    if (!(OUTPUT_FORMATS as readonly string[]).includes(options.format)) {
      throw new UsageError(`unknown --format "${options.format}".`, `Formats are: ${OUTPUT_FORMATS.join(', ')}.`);
    }
    return refuseBinaryOnTerminal(options.format as OutputFormat, options);
  }
  if (options.outputPath !== undefined) return formatOfPath(options.outputPath);
  return options.stdoutIsTTY ? 'table' : 'csv';
}

/**
 * The format an -o path names: a known extension's, CSV for a name without one. An extension of a
 * format prospect cannot write (`.xls`, `.txt`) is refused before any call: writing CSV into it would give
 * a file its own program cannot open.
 */
function formatOfPath(outputPath: string): OutputFormat {
  const extension = extname(outputPath).toLowerCase();
  if (extension === '') return 'csv';
  const format = FORMAT_BY_EXTENSION[extension];
  if (format !== undefined) return format;
  throw new UsageError(
    `cannot write ${extension} files (-o ${outputPath}): prospect writes CSV, JSON, NDJSON and Excel (.xlsx).`,
    `Name it ${Object.keys(FORMAT_BY_EXTENSION).join(', ')}, or add --format ` +
      `${OUTPUT_FORMATS.filter((name) => name !== 'table').join('|')} to write one of those under this name.`,
  );
}

/** A workbook is bytes for a file: on a terminal it is only noise (`> list.xlsx` and pipes are fine). */
function refuseBinaryOnTerminal(
  format: OutputFormat,
  options: { outputPath?: string; stdoutIsTTY: boolean },
): OutputFormat {
  if (format === 'xlsx' && options.outputPath === undefined && options.stdoutIsTTY) {
    throw new UsageError(
      '--format xlsx writes a binary file, not text for a terminal.',
      'Add -o FILE.xlsx, or redirect: > list.xlsx.',
    );
  }
  return format;
}

/**
 * Checked before any paid call: a run must not spend units and then fail to write its result. An
 * output that cannot be written is exit 7, as a full disk is: the command line is right, the place is
 * not. A regular file is replaced by a rename, so its directory must be writable and the file itself
 * not read-only (nor its `sidecar`, FILE.meta.json); a device, a FIFO or a descriptor is written
 * directly, so only it must be writable.
 */
export async function checkOutputPath(
  outputPath: string | undefined,
  options: { sidecar?: string } = {},
): Promise<void> {
  if (outputPath === undefined) return;
  const notWritable = (why: string, hint = 'Create the directory or fix its permissions, or give another -o path.') =>
    new CliError(`cannot write ${outputPath}: ${why}.`, ExitCode.output, hint);
  const target = outputTarget(outputPath);
  if (target.kind === 'stdout') return;
  if (target.kind === 'descriptor') {
    if (!descriptorIsOpen(target.fd))
      throw notWritable(
        `descriptor ${target.fd} is not open`,
        'Open it in the shell that starts prospect (for example 3>file), or give another path.',
      );
    return;
  }
  if (target.kind === 'device') {
    await access(target.path, constants.W_OK).catch(() => {
      throw notWritable('permission denied', 'Fix its permissions, or give another path.');
    });
    return;
  }
  const directory = dirname(target.path);
  const folder = await stat(directory).catch(() => undefined);
  if (folder === undefined) throw notWritable(`the directory ${directory} does not exist`);
  if (!folder.isDirectory()) throw notWritable(`${directory} is not a directory`);
  try {
    await access(directory, constants.W_OK);
  } catch {
    throw notWritable(`the directory ${directory} is not writable`);
  }
  const existing = await stat(target.path).catch(() => undefined);
  if (existing?.isDirectory()) throw notWritable('it is a directory');
  await assertReplaceable(target.path);
  if (options.sidecar !== undefined) await assertReplaceable(`${target.path}${options.sidecar}`);
}

/** An output that becomes visible all at once (file) or streams (stdout, a device). */
export interface Output {
  sink: TextSink;
  /** The path that will hold the result, or undefined for stdout. */
  path: string | undefined;
  /** Written as it goes (stdout, a device, a FIFO): a failed run cannot take back what went out. */
  direct: boolean;
  /** `beforeReplace` runs just before a file target is renamed into place (never for a stream). */
  commit(beforeReplace?: () => Promise<void>): Promise<void>;
  abort(): Promise<void>;
  /** FILE.meta.json beside the output, written once the output is in place; nothing for stdout or a device. */
  writeSidecar(suffix: string, content: string): Promise<void>;
  /** Where a sidecar goes, or undefined when none is written (stdout, a device). */
  sidecarPath(suffix: string): string | undefined;
}

export async function openOutput(outputPath: string | undefined, stdout: Writable): Promise<Output> {
  const target = outputPath === undefined ? ({ kind: 'stdout' } as const) : outputTarget(outputPath);
  if (target.kind !== 'file')
    return openStream(
      outputPath,
      target.kind === 'stdout' ? { stream: stdout, owned: false } : await openDirect(target),
    );
  const file: AtomicFile = await openAtomicFile(target.path);
  // Held until the output is committed: a run that fails at the last step (a full disk, a refused
  // rename) must not leave a sidecar describing an export that never replaced the old file.
  const sidecars: Array<{ suffix: string; content: string }> = [];
  return {
    sink: streamSink(file.stream),
    path: outputPath,
    direct: false,
    async commit(beforeReplace) {
      const pending = sidecars.splice(0);
      await file.commit(async () => {
        await beforeReplace?.();
        for (const { suffix } of pending) await dropSidecar(`${target.path}${suffix}`);
      });
      for (const { suffix, content } of pending) await writeFileAtomic(`${target.path}${suffix}`, content);
    },
    abort: () => file.abort(),
    async writeSidecar(suffix, content) {
      sidecars.push({ suffix, content });
    },
    sidecarPath: (suffix) => `${outputPath}${suffix}`,
  };
}

/** A stream written as it goes: stdout, or a device or descriptor opened for this run (closed at the end). */
function openStream(
  outputPath: string | undefined,
  { stream, owned, terminal }: { stream: Writable & { isTTY?: boolean }; owned: boolean; terminal?: boolean },
): Output {
  // stdout is not ended (the summary may follow), but a run succeeds only once its rows have gone out:
  // a reader that closed the pipe (| head) then surfaces here as EPIPE, not after the success.
  const close = () => (owned ? finishStream(stream) : afterPendingWrites(stream));
  return {
    sink: streamSink(stream, terminal ?? stream.isTTY === true),
    path: outputPath,
    direct: true,
    commit: close,
    abort: async () => {
      if (owned) stream.destroy();
    },
    writeSidecar: async () => {},
    sidecarPath: () => undefined,
  };
}

async function openDirect(
  target: { kind: 'device'; path: string } | { kind: 'descriptor'; fd: number },
): Promise<{ stream: Writable; owned: true; terminal: boolean }> {
  // A FIFO's open waits for its reader, as `cat > fifo` does.
  const stream =
    target.kind === 'device'
      ? createWriteStream(target.path, { flags: 'w' })
      : createWriteStream('', { fd: target.fd, autoClose: false });
  const [fd] = target.kind === 'device' ? ((await once(stream, 'open')) as [number]) : [target.fd];
  return { stream, owned: true, terminal: isatty(fd) };
}

function finishStream(stream: Writable): Promise<void> {
  return new Promise((resolveEnd, reject) => {
    stream.once('error', reject);
    stream.end(() => resolveEnd());
  });
}

/**
 * A whole small file the person named (--summary FILE): a regular file atomically and durably, a
 * device, FIFO or descriptor directly, `-` or /dev/stdout after the data on stdout.
 */
export async function writeNamedFile(path: string, content: string, stdout: Writable): Promise<void> {
  const target = outputTarget(path);
  if (target.kind === 'file') return writeFileAtomic(target.path, content);
  const output = await openOutput(path, stdout);
  await output.sink.write(content);
  await output.commit();
}
