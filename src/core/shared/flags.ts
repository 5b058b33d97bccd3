import { z } from 'zod';

/**
 * The flags the job commands share, as zod shapes: a command's flags are its schema's input type,
 * the job's options its output type, so no shape is written twice. Commander has already parsed and
 * bounded each value (src/commands/options.ts); these schemas state the types and turn an absent
 * switch into false.
 */

/** -f, -o, --columns, --no-escape-formulas (addOutputOptions). */
export const outputOptions = {
  format: z.string().optional(),
  /** `-o -` is stdout, as for most programs that take a file name. */
  output: z
    .string()
    .optional()
    .transform((path) => (path === '-' ? undefined : path)),
  columns: z.string().optional(),
  escapeFormulas: z.boolean(),
  /** --bom: a UTF-8 byte-order mark before a CSV, for Excel on Windows. */
  bom: z.boolean().default(false),
};

/** --preset NAME (contacts, pipeline): CRM headers, src/io/presets.ts. */
export const presetOption = {
  preset: z.string().optional(),
};

/** --summary FILE: a JSON record of the run. */
export const summaryOption = {
  summary: z.string().optional(),
};

/** --exclude-domains FILE and --exclude-emails FILE, repeatable (src/core/shared/suppression.ts). */
export const suppressionOptions = {
  excludeDomains: z.array(z.string()).default([]),
  excludeEmails: z.array(z.string()).default([]),
};

/** --keep-empty (contacts, pipeline): a row for every company without a named contact. */
export const keepEmptyOption = {
  keepEmpty: z.boolean().default(false),
};

/** --cache-ttl and --no-cache, for every command that verifies. */
export const verifyCacheOptions = {
  cache: z.boolean(),
  cacheTtl: z.string(),
};

/** The domains or addresses given as arguments, and the file to read them from. */
export const entriesOptions = {
  args: z.array(z.string()),
  file: z.string().optional(),
  /** --strict: an invalid entry is an error before any request. */
  strict: z.boolean().default(false),
};
