import { access, constants, stat } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { CliError, ExitCode, UsageError } from '../exit-codes.js';
import { openAtomicFile, writeFileAtomic, type AtomicFile } from './atomic-file.js';
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
export function resolveFormat(options: { format?: string; outputPath?: string; stdoutIsTTY: boolean }): OutputFormat {
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
    `Name it ${Object.keys(FORMAT_BY_EXTENSION).join(', ')}, or add --format ${OUTPUT_FORMATS.filter((name) => name !== 'table').join('|')} to write one of those under this name.`,
  );
}

/** A workbook is bytes for a file: on a terminal it is only noise (`> list.xlsx` and pipes are fine). */
function refuseBinaryOnTerminal(format: OutputFormat, options: { outputPath?: string; stdoutIsTTY: boolean }): OutputFormat {
  if (format === 'xlsx' && options.outputPath === undefined && options.stdoutIsTTY) {
    throw new UsageError('--format xlsx writes a binary file, not text for a terminal.', 'Add -o FILE.xlsx, or redirect: > list.xlsx.');
  }
  return format;
}

/**
 * Checked before any paid call: a run must not spend units and then fail to write its result. An
 * output that cannot be written is exit 7, as a full disk is: the command line is right, the place is not.
 */
export async function checkOutputPath(outputPath: string | undefined): Promise<void> {
  if (outputPath === undefined) return;
  const target = resolve(outputPath);
  const directory = dirname(target);
  const notWritable = (why: string) =>
    new CliError(`cannot write ${outputPath}: ${why}.`, ExitCode.output, 'Create the directory or fix its permissions, or give another -o path.');
  const folder = await stat(directory).catch(() => undefined);
  if (folder === undefined) throw notWritable(`the directory ${directory} does not exist`);
  if (!folder.isDirectory()) throw notWritable(`${directory} is not a directory`);
  try {
    await access(directory, constants.W_OK);
  } catch {
    throw notWritable(`the directory ${directory} is not writable`);
  }
  const existing = await stat(target).catch(() => undefined);
  if (existing?.isDirectory()) throw notWritable('it is a directory');
}

/** An output that becomes visible all at once (file) or streams (stdout). */
export interface Output {
  sink: TextSink;
  /** The path that will hold the result, or undefined for stdout. */
  path: string | undefined;
  commit(): Promise<void>;
  abort(): Promise<void>;
  /** A sidecar next to the file output (FILE.meta.json), written once the output itself is in place; nothing for stdout. */
  writeSidecar(suffix: string, content: string): Promise<void>;
}

export async function openOutput(outputPath: string | undefined, stdout: Writable): Promise<Output> {
  if (outputPath === undefined) {
    return {
      sink: streamSink(stdout),
      path: undefined,
      commit: async () => {},
      abort: async () => {},
      writeSidecar: async () => {},
    };
  }
  const file: AtomicFile = await openAtomicFile(resolve(outputPath));
  // Held until the output is committed: a run that fails at the last step (a full disk, a refused
  // rename) must not leave a sidecar describing an export that never replaced the old file.
  const sidecars: Array<{ suffix: string; content: string }> = [];
  return {
    sink: streamSink(file.stream),
    path: outputPath,
    async commit() {
      await file.commit();
      for (const { suffix, content } of sidecars.splice(0)) await writeFileAtomic(`${resolve(outputPath)}${suffix}`, content);
    },
    abort: () => file.abort(),
    async writeSidecar(suffix, content) {
      sidecars.push({ suffix, content });
    },
  };
}
