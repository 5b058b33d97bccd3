import { z } from 'zod';
import type { Flag, FlagInput, FlagOutput } from '../../options/flag.js';
import { collect } from '../../options/values.js';

type Shape<Flags extends readonly Flag[]> = {
  [F in Flags[number] as F['name']]: z.ZodType<FlagOutput<F>, FlagInput<F>>;
};

/**
 * A command's flags (src/options/command-flags.ts) as a zod shape: a command's flags are its
 * schema's input type, the job's options its output type, so no flag is declared twice. Commander
 * has already parsed and bounded each value; the schema checks the type its form gives (FlagOutput)
 * and turns an absent switch into false.
 */
export function flagShape<const Flags extends readonly Flag[]>(flags: Flags): Shape<Flags> {
  const shape: Record<string, z.ZodType> = {};
  for (const flag of flags) shape[flag.name] = flagSchema(flag);
  return shape as Shape<Flags>;
}

function flagSchema(flag: Flag): z.ZodType {
  if (flag.schema !== undefined) return flag.schema(z);
  // Commander makes `--no-x` true unless given.
  if (!flag.flags.includes('<')) return z.boolean().default(Boolean(flag.default ?? flag.flags.includes('--no-')));
  const value: z.ZodType =
    flag.choices !== undefined
      ? z.enum(flag.choices as [string, ...string[]])
      : flag.parse === collect
        ? z.array(z.string())
        : flag.parse !== undefined
          ? z.custom() // what its parser gave, which commander ran: FlagOutput is its result type
          : z.string();
  return flag.default === undefined ? value.optional() : value.default(flag.default);
}
