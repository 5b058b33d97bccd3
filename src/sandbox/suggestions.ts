/**
 * "Did you mean" for unknown technology and country names (contract row 7): names that start with what
 * was typed come first, then names that contain it, then names within a small edit distance (a swap
 * of two neighbouring letters counts as one edit). Ties go to the more popular name.
 */

export function closestNames(
  input: string,
  candidates: readonly string[],
  popularity: (name: string) => number = () => 0,
  max = 5,
): string[] {
  const query = input.trim().toLowerCase();
  if (query === '') return [];
  const budget = Math.max(2, Math.floor(query.length / 3));
  const scored: Array<{ name: string; score: number; popularity: number }> = [];
  for (const name of candidates) {
    const lower = name.toLowerCase();
    let score: number;
    if (lower.startsWith(query)) score = 0;
    else if (query.length >= 3 && lower.includes(query)) score = 1;
    else {
      const d = editDistance(query, lower, budget);
      if (d > budget) continue;
      score = 1 + d;
    }
    scored.push({ name, score, popularity: popularity(name) });
  }
  scored.sort(
    (a, b) => a.score - b.score || b.popularity - a.popularity || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  return scored.slice(0, max).map((s) => s.name);
}

/** Optimal-string-alignment distance; gives up (returning budget + 1) once it must exceed the budget. */
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
