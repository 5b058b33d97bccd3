/** Where a command's input text comes from: its arguments, a file, or standard input. */
import { readFile } from 'node:fs/promises';
import { UsageError } from '../../exit-codes.js';
import type { InputFormat } from './model.js';

export interface InputText {
  text: string;
  /** For messages: a file name, `standard input` or `the command line`. */
  origin: string;
  /** Set when the source has one format whatever it looks like (arguments are always lines). */
  format?: InputFormat;
}

export interface InputSource {
  args?: readonly string[];
  /** A path, or `-` for standard input. */
  file?: string;
  stdin?: NodeJS.ReadableStream;
}

/**
 * The input text of a command: its arguments (one entry each), else `file`, else standard input
 * when it is piped. Null when there is nothing to read, so the command can say what it expected.
 */
export async function readInputText(source: InputSource): Promise<InputText | null> {
  const args = source.args ?? [];
  if (args.length > 0 && source.file !== undefined) {
    throw new UsageError('give the entries either as arguments or in a file, not both');
  }
  if (args.length > 0) return { text: args.join('\n'), origin: 'the command line', format: 'lines' };
  if (source.file !== undefined && source.file !== '-') {
    return { text: await readTextFile(source.file), origin: source.file };
  }
  const stdin = source.stdin;
  // A terminal on stdin means nobody piped anything: waiting for typed input would look like a hang.
  if (stdin === undefined || (source.file === undefined && isTerminal(stdin))) return null;
  return { text: await readStream(stdin), origin: 'standard input' };
}

/** Reads a UTF-8 file; a missing or unreadable file is the user's to fix, so a usage error. */
export async function readTextFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${fileErrorReason(error)}`);
  }
}

function isTerminal(stream: NodeJS.ReadableStream): boolean {
  return 'isTTY' in stream && stream.isTTY === true;
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  // Decoding once at the end keeps a multi-byte character split across chunks intact.
  return Buffer.concat(chunks).toString('utf8');
}

function fileErrorReason(error: unknown): string {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'it is a directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return error instanceof Error ? error.message : String(error);
}
