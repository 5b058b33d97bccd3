/** The text without surrounding whitespace; undefined when nothing is left (an unset or blank value). */
export function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === '' ? undefined : trimmed;
}

/** At most `max` characters, the cut marked with `marker` (which counts towards `max`). */
export function shorten(text: string, max: number, marker = '…'): string {
  return text.length > max ? `${text.slice(0, max - marker.length)}${marker}` : text;
}

/**
 * What a terminal may be shown of text from outside: kept under its old name for the callers that
 * use it; src/util/display-safe.ts is the one definition.
 */
export { displaySafe as withoutControlCharacters } from './display-safe.js';
