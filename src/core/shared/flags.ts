import { z } from 'zod';
import type { Flag } from '../../options/flag.js';

type FlagSchema<F extends Flag> = ReturnType<F['schema']>;

/** A flag's schema, with the flag's default when it has one: commander's default, stated once. */
type Shape<Flags extends readonly Flag[]> = {
  [F in Flags[number] as F['name']]: F extends { default: unknown } ? z.ZodDefault<FlagSchema<F>> : FlagSchema<F>;
};

/**
 * A command's flags (src/options/command-flags.ts) as a zod shape: a command's flags are its
 * schema's input type, the job's options its output type, so no flag is declared twice. Commander
 * has already parsed and bounded each value; the schema states the types and turns an absent switch
 * into false.
 */
export function flagShape<const Flags extends readonly Flag[]>(flags: Flags): Shape<Flags> {
  const shape: Record<string, z.ZodType> = {};
  for (const flag of flags) {
    const schema = flag.schema(z);
    shape[flag.name] = flag.default === undefined ? schema : schema.default(flag.default as never);
  }
  return shape as Shape<Flags>;
}
