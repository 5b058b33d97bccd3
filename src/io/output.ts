import { access, constants, stat } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { UsageError } from '../exit-codes.js';
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
  if (options.outputPath !== undefined) {
    return FORMAT_BY_EXTENSION[extname(options.outputPath).toLowerCase()] ?? 'csv';
  }
  return options.stdoutIsTTY ? 'table' : 'csv';
}

/** A workbook is bytes for a file: on a terminal it is only noise (`> list.xlsx` and pipes are fine). */
function refuseBinaryOnTerminal(format: OutputFormat, options: { outputPath?: string; stdoutIsTTY: boolean }): OutputFormat {
  if (format === 'xlsx' && options.outputPath === undefined && options.stdoutIsTTY) {
    throw new UsageError('--format xlsx writes a binary file, not text for a terminal.', 'Add -o FILE.xlsx, or redirect: > list.xlsx.');
  }
  return format;
}

/** Checked before any paid call: a run must not spend units and then fail to write its result. */
export async function checkOutputPath(outputPath: string | undefined): Promise<void> {
  if (outputPath === undefined) return;
  const target = resolve(outputPath);
  const directory = dirname(target);
  try {
    await access(directory, constants.W_OK);
  } catch {
    throw new UsageError(`cannot write ${outputPath}: the directory ${directory} does not exist or is not writable.`);
  }
  const existing = await stat(target).catch(() => undefined);
  if (existing?.isDirectory()) throw new UsageError(`cannot write ${outputPath}: it is a directory.`);
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
