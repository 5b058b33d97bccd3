/** Where a command's input text comes from: its arguments, a file, or standard input. */
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { UsageError } from '../../exit-codes.js';
import { runTempFile } from '../run-temp-file.js';
import { decodeStream } from './decode.js';
import { isZipFile, workbookAsCsv } from './xlsx.js';
import type { InputFormat } from './model.js';

export interface InputSource {
  args?: readonly string[];
  /** A path, or `-` for standard input. */
  file?: string;
  stdin?: NodeJS.ReadableStream;
}

/** A command's input as it arrives, readable from its start again unless it is standard input. */
export interface InputStream {
  /** For messages: a file name, `standard input` or `the command line`. */
  origin: string;
  /** Set when the source has one format whatever it looks like (arguments are always lines). */
  format?: InputFormat;
  /** The text from its start, decoded, chunk by chunk. Standard input can be opened once. */
  open(): AsyncIterable<string>;
  /** False for standard input and FIFOs: reading it twice (for --strict) needs a copy (spoolToFile). */
  reopenable: boolean;
  /** The bytes as they come, to copy once (spoolToFile): set when not reopenable. */
  bytes?: () => NodeJS.ReadableStream;
}

/**
 * The input of a command: its arguments (one entry each), else `file`, else standard input when it
 * is piped. Null when there is nothing to read, so the command can say what it expected.
 */
export function openInputStream(source: InputSource): InputStream | null {
  const args = source.args ?? [];
  if (args.length > 0 && source.file !== undefined) {
    throw new UsageError('give the entries either as arguments or in a file, not both');
  }
  if (args.length > 0)
    return { origin: 'the command line', format: 'lines', open: () => oneChunk(args.join('\n')), reopenable: true };
  if (source.file !== undefined && source.file !== '-') {
    const path = source.file;
    if (isStream(path)) return streamOf(path, () => createReadStream(path));
    return { origin: path, open: () => fileChunks(path), reopenable: true };
  }
  const stdin = source.stdin;
  // A terminal on stdin means nobody piped anything: waiting for typed input would look like a hang.
  if (stdin === undefined || (source.file === undefined && isTerminal(stdin))) return null;
  return streamOf('standard input', () => stdin);
}

/** An input read once, as it comes: standard input, a FIFO, `<(…)` (which a seek or a second open would lose). */
function streamOf(origin: string, bytes: () => NodeJS.ReadableStream): InputStream {
  return { origin, open: () => decodeStream(bytes(), origin), reopenable: false, bytes };
}

/** A FIFO, a socket or a device (`--domains-file <(…)`, /dev/stdin): anything but a file or a directory. */
function isStream(path: string): boolean {
  try {
    const stat = statSync(path);
    return !stat.isFile() && !stat.isDirectory();
  } catch {
    return false; // fileChunks says why it cannot be read
  }
}

/**
 * Standard input (or a FIFO) copied, bytes as they are, to a temporary file that the run removes at its
 * end (and a signal handler, if the run is cut short), so it can be read twice without holding it in
 * memory: --strict reads the whole input before the first call, then again to work on it.
 */
export async function spoolToFile(
  input: InputStream,
  onCleanup: (task: () => Promise<void>) => void,
): Promise<InputStream> {
  if (input.bytes === undefined) return input;
  const path = runTempFile('input', onCleanup);
  await pipeline(input.bytes(), createWriteStream(path, { mode: 0o600 }));
  return { origin: input.origin, open: () => fileChunks(path, input.origin), reopenable: true };
}

async function* fileChunks(path: string, origin = path): AsyncGenerator<string> {
  try {
    // A workbook is read as the CSV of its first sheet, wherever a CSV is read (told by its bytes, not its name).
    if (await isZipFile(path)) yield* workbookAsCsv(path, origin);
    else yield* decodeStream(createReadStream(path), origin);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read ${origin}: ${fileErrorReason(error)}`);
  }
}

async function* oneChunk(text: string): AsyncGenerator<string> {
  yield text;
}

function isTerminal(stream: NodeJS.ReadableStream): boolean {
  return 'isTTY' in stream && stream.isTTY === true;
}

function fileErrorReason(error: unknown): string {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'it is a directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return error instanceof Error ? error.message : String(error);
}
