/**
 * "Did you mean" for unknown technology and country names (contract row 7): names that start with what
 * was typed come first, then names that contain it, then names within a small edit distance (a swap
 * of two neighbouring letters counts as one edit). Ties go to the more popular name.
 */
import { editDistance } from '../util/text.js';

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
