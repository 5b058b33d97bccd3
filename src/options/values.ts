/**
 * Parsers of option values, shared by the commands' flags and the config file's checks. They throw
 * commander's InvalidArgumentError, which commander turns into its usage message (exit 2).
 */
import { InvalidArgumentError } from 'commander';

/** Commander accumulator for repeatable options. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Commander parser for whole numbers within bounds; rejects "10x", "1.5", "-3" with a usage error. */
export function integerInRange(flag: string, min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value: string) => {
    const trimmed = value.trim();
    const parsed = Number(trimmed);
    if (!/^\d+$/.test(trimmed) || !Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
      throw new InvalidArgumentError(`${flag} takes a whole number ${range}.`);
    }
    return parsed;
  };
}

/** The bounds of --concurrency and of the config key `concurrency`, named `name` in errors. */
export const concurrencyValue = (name: string) => integerInRange(name, 1, 32);
/** The bounds of --max-answer-size (MiB) and of its config key and environment variable. */
export const maxAnswerSizeValue = (name: string) => integerInRange(name, 1, 512);
/** The bounds of --verify-budget and of the config key `verify-budget`. */
export const verifyBudgetValue = (name: string) => integerInRange(name, 0);

export function positiveInteger(flag: string): (value: string) => number {
  return integerInRange(flag, 1);
}
