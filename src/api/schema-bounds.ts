/** Checking an answer stays bounded whatever its shape (issue 41): arrays stop early, unknown fields are capped. */
import { z } from 'zod';

/** Failing items after which an array's check stops: the first problem is the one said. */
const MAX_FAILED_ITEMS = 3;

/** An unknown field passed through to JSON output may weigh this much (a value 1, a string or key its length). */
export const MAX_UNKNOWN_FIELD_WEIGHT = 64 * 1024;

/** `z.array(item)` that stops after MAX_FAILED_ITEMS: zod would build 100,000 problems for 10,000 rows of `{}`. */
export function itemsOf<T extends z.ZodType>(item: T) {
  // eslint-disable-next-line no-restricted-syntax -- a schema factory, called once per schema at module level
  return z.array(z.unknown()).transform((items, ctx) => {
    const checked: z.output<T>[] = [];
    let failed = 0;
    for (let index = 0; index < items.length; index++) {
      const result = item.safeParse(items[index]);
      if (result.success) {
        checked.push(result.data);
        continue;
      }
      for (const { message, path } of result.error.issues)
        ctx.issues.push({ code: 'custom', message, path: [index, ...path], input: items[index] });
      if (++failed === MAX_FAILED_ITEMS) break;
    }
    return failed > 0 ? z.NEVER : checked;
  });
}

/** `z.looseObject(shape)` whose unknown fields each weigh at most MAX_UNKNOWN_FIELD_WEIGHT. */
export function looseObject<S extends z.ZodRawShape>(shape: S) {
  // eslint-disable-next-line no-restricted-syntax -- a schema factory, called once per schema at module level
  return z.object(shape).catchall(UnknownField);
}

const UnknownField = z
  .unknown()
  .refine((value) => weightOf(value, MAX_UNKNOWN_FIELD_WEIGHT) <= MAX_UNKNOWN_FIELD_WEIGHT, {
    message: `an unknown field larger than prospect passes through (${MAX_UNKNOWN_FIELD_WEIGHT} values and characters)`,
  });

/** A value's weight (see MAX_UNKNOWN_FIELD_WEIGHT), counted only until it passes `limit`. */
export function weightOf(value: unknown, limit: number): number {
  let weight = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && weight <= limit) {
    const next = pending.pop();
    weight++;
    if (typeof next === 'string') weight += next.length;
    else if (Array.isArray(next)) pending.push(...next);
    else if (next !== null && typeof next === 'object')
      for (const [key, member] of Object.entries(next)) {
        weight += key.length;
        pending.push(member);
      }
  }
  return weight;
}
