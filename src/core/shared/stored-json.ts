import type { z } from 'zod';
import { UsageError } from '../../exit-codes.js';

/** Which file is damaged, and what the person can do to start over without it. */
export interface StoredFile {
  /** The path as the message shows it (with `:line` for a line of an NDJSON file). */
  name: string;
  /** The hint: which file or directory to remove, and what that costs. */
  startOver: string;
}

/**
 * Reads back JSON that prospect wrote itself (a checkpoint, a line of a verification ledger). Disk
 * data is checked against its schema like any other input: a file damaged by hand or by a disk fault
 * stops the run with exit 2, naming the file and how to start over, rather than resuming on wrong data.
 */
export function parseStoredJson<Schema extends z.ZodType>(
  text: string,
  schema: Schema,
  file: StoredFile,
): z.output<Schema> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw damaged(file, 'it is not valid JSON');
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    throw damaged(file, `${where}${issue?.message ?? 'unexpected content'}`);
  }
  return result.data;
}

export function damaged(file: StoredFile, reason: string): UsageError {
  return new UsageError(`${file.name} is damaged (${reason}).`, file.startOver);
}
