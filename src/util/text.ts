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
 * Optimal-string-alignment distance (a swap of two neighbours is one edit), for "did you mean"; gives
 * up (returning budget + 1) once it must exceed the budget.
 */
export function editDistance(a: string, b: string, budget = Infinity): number {
  if (Math.abs(a.length - b.length) > budget) return budget + 1;
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, (beforePrevious[j - 2] as number) + 1);
      current.push(value);
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > budget) return budget + 1;
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length] as number;
}
