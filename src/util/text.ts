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
 * Escape sequences and other control characters (C0 but for tab, DEL, C1) cut out of text from
 * outside, so a service's words cannot set a window title, colour a line or move the cursor on the
 * terminal they are shown on. A whole ESC sequence goes, not only its ESC, so no `[31m` is left.
 */
export function withoutControlCharacters(text: string): string {
  return text
    .replace(
      /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-_]?|\u009b[0-?]*[ -/]*[@-~]/g,
      '',
    )
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '');
}
